/**
 * The error a storage throws when a request would take one of its counters past the limit
 * (`insertMessages`' `counters`): nothing is stored and no counter changes.
 *
 * @module
 */

/**
 * Thrown by `insertMessages` when one of its counters would pass its limit. Told apart by
 * `name` (or `code`), not by `instanceof`: a host's adapter may throw its own.
 */
export class CounterLimitError extends Error {
  /** `LIMIT_REACHED`. */
  readonly code = 'LIMIT_REACHED';
  /** The index, in the `counters` given, of a counter the request would have taken past its limit. */
  readonly counter: number;

  constructor(counter: number) {
    super(`A counter would pass its limit: counter ${counter} of the request`);
    this.name = 'CounterLimitError';
    this.counter = counter;
  }
}

/** Whether `error` is a {@link CounterLimitError} (by name: bundles hold their own copies). */
export function isCounterLimit(error: unknown): error is CounterLimitError {
  return error instanceof Error && (error.name === 'CounterLimitError' || (error as { code?: unknown }).code === 'LIMIT_REACHED');
}

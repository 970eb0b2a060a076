/**
 * The one polling helper of the tests, for a condition no event announces. Prefer an event
 * (a listener, a child's output line) where there is one, and fake timers where time itself
 * is the subject.
 */
import { inspect } from 'node:util';

// The real timer and clock, taken before a test can fake them: polling waits for real work
// (sockets, child processes, storage), also in a test that fakes timers.
const realSetTimeout = globalThis.setTimeout;
const realNow = Date.now;

/** What {@link eventually} rejects with when its time is up. */
export class PollTimeout extends Error {}

/** How {@link eventually} polls. */
export interface PollOptions {
  /** Give up after this long, ms. Default 5,000. */
  timeoutMs?: number;
  /** Pause between tries, ms. Default 10. */
  intervalMs?: number;
  /** What is awaited, for the error message. */
  what?: string;
}

/**
 * Calls `probe` (sync or async) until its value is accepted, and resolves with that value.
 * Accepted: by `until` when given, else any value but `undefined` and `false` (so a
 * predicate resolves with `true`, a lookup with what it found). Rejects after `timeoutMs`
 * with a {@link PollTimeout} naming what was awaited and the last value seen; a probe that
 * throws rejects at once with its error.
 */
export function eventually<T>(probe: () => T | Promise<T>, options: PollOptions & { until: (value: T) => boolean }): Promise<T>;
export function eventually<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, options?: PollOptions): Promise<T>;
export async function eventually<T>(
  probe: () => T | Promise<T>,
  { timeoutMs = 5_000, intervalMs = 10, what = 'the condition', until = (value: T) => value !== undefined && value !== false }: PollOptions & { until?: (value: T) => boolean } = {},
): Promise<T> {
  const deadline = realNow() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (until(value)) return value;
    if (realNow() >= deadline) {
      const last = inspect(value, { depth: 3, breakLength: Infinity, maxArrayLength: 10, maxStringLength: 500 });
      throw new PollTimeout(`timed out after ${timeoutMs} ms waiting for ${what}; last value: ${last}`);
    }
    await new Promise((resolve) => realSetTimeout(resolve, intervalMs));
  }
}

/**
 * The stored traces of messages of several parts, kept by the instance that submitted them,
 * so that a receipt ending one part but not its message gets a span too. Storage tells the
 * receipt handler only that message's ref then (`ReceiptResult` of kind `part`), not its
 * `traceparent`, and reading the message back would cost a storage read per receipt (and
 * needs its principal, which the receipt does not name).
 *
 * What it does not promise: a part's receipt that reaches another instance than the one that
 * submitted the part (after a restart, or on a carrier that answers on any bind) finds no
 * trace here and has no span; the receipt that ends the message always has one, as storage
 * gives the whole message then.
 */

/**
 * Most traces kept. Receipts come seconds after their submission, so this covers far more
 * than the messages in flight; past it the oldest are forgotten, so the receipts a carrier
 * never sends cost no memory for long.
 */
export const PART_TRACES_KEPT = 10_000;

/** Message ref to its stored `traceparent`, for the messages of several parts submitted here. */
export class PartTraces {
  /** In order of noting, so the oldest is first. */
  readonly #byRef = new Map<string, string>();

  constructor(private readonly kept: number = PART_TRACES_KEPT) {}

  /** Notes the trace of message `ref`, one part of which was just submitted here. */
  note(ref: string, traceparent: string): void {
    if (this.#byRef.has(ref)) return;
    this.#byRef.set(ref, traceparent);
    if (this.#byRef.size > this.kept) this.#byRef.delete(this.#byRef.keys().next().value!);
  }

  /** The trace noted for message `ref`, if it is still kept. */
  of(ref: string): string | undefined {
    return this.#byRef.get(ref);
  }

  /** Forgets message `ref`: it ended, and its later receipts repeat ones already traced. */
  forget(ref: string): void {
    this.#byRef.delete(ref);
  }
}

/**
 * The rows this ledger holds a lease on (inserted leased, or claimed), as it last wrote or
 * read them, so that the owner's next step on a message (a part's submission, a retry, an
 * ending) is one compare-and-set write with no read before it. Only a shortcut: a row kept
 * here that another writer has moved on makes the write lose, and the ledger reads the row
 * and decides again. Bounded, so a crowd of leases never grows it without end.
 *
 * @module
 */
import type { MessageRow } from '../storage/record-store.js';

/** How many rows are kept at most: beyond it the oldest go (and cost a read when used). */
export const LEASED_ROWS_LIMIT = 10_000;

/** The rows this ledger leased, by ref, oldest first (see the module's TSDoc). */
export class LeasedRows {
  readonly #rows = new Map<string, MessageRow>();

  constructor(private readonly limit = LEASED_ROWS_LIMIT) {}

  /** The row of `ref` as last known here, or `undefined`. */
  get(ref: string): MessageRow | undefined {
    return this.#rows.get(ref);
  }

  /** Keeps `row` while it is queued under a lease; forgets its ref once it left either. */
  remember(row: MessageRow): void {
    const ref = row.record.ref;
    if (row.queue === null || row.leaseUntil === null) {
      this.#rows.delete(ref);
      return;
    }
    const known = this.#rows.has(ref);
    this.#rows.set(ref, row);
    if (!known && this.#rows.size > this.limit) this.#rows.delete(this.#rows.keys().next().value!);
  }

  /** Forgets the row of `ref` (another writer moved it on). */
  forget(ref: string): void {
    this.#rows.delete(ref);
  }
}

/**
 * The rows this ledger expects to write next, as it last wrote or read them: those queued
 * under its lease (inserted leased, or claimed), and those it submitted, which wait for
 * their receipts. The owner's next step on a message (a part's submission, a retry, an
 * ending, a receipt found by its carrier id) is then one compare-and-set write with no read
 * before it. Only a shortcut: a row kept here that another writer has moved on makes the
 * write lose, and the ledger reads the row and decides again. Bounded, so a crowd of
 * messages never grows it without end.
 *
 * @module
 */
import type { MessageRow } from '../storage/record-store.js';

/** How many rows are kept at most: beyond it the oldest go (and cost a read when used). */
export const KNOWN_ROWS_LIMIT = 10_000;

/** The rows this ledger is about to write again, by ref, oldest first (see the module's TSDoc). */
export class KnownRows {
  readonly #rows = new Map<string, MessageRow>();
  /** The ref of each carrier id of the rows kept. */
  readonly #byCarrierId = new Map<string, string>();

  constructor(private readonly limit = KNOWN_ROWS_LIMIT) {}

  /** The row of `ref` as last known here, or `undefined`. */
  get(ref: string): MessageRow | undefined {
    return this.#rows.get(ref);
  }

  /**
   * The kept row `carrierIds[0]` names, or `undefined`. Only the first spelling: the store's
   * lookup takes the first spelling that names any row, and a later one found here could
   * be another message than the one the store would find.
   */
  byCarrierId(carrierIds: readonly string[]): MessageRow | undefined {
    const first = carrierIds[0];
    const ref = first === undefined ? undefined : this.#byCarrierId.get(first);
    return ref === undefined ? undefined : this.#rows.get(ref);
  }

  /** Keeps `row` while it is queued under a lease or submitted; forgets its ref otherwise. */
  remember(row: MessageRow): void {
    const ref = row.record.ref;
    if ((row.queue === null || row.leaseUntil === null) && row.record.state !== 'submitted') {
      this.forget(ref);
      return;
    }
    const known = this.#rows.get(ref);
    this.#rows.set(ref, row);
    if (row.carrierIds !== known?.carrierIds) for (const id of row.carrierIds) this.#byCarrierId.set(id, ref);
    if (known === undefined && this.#rows.size > this.limit) this.forget(this.#rows.keys().next().value!);
  }

  /** Forgets the row of `ref` (it ended, or another writer moved it on). */
  forget(ref: string): void {
    const row = this.#rows.get(ref);
    if (row === undefined) return;
    this.#rows.delete(ref);
    // A carrier id reused by a newer message names that one now: leave its entry.
    for (const id of row.carrierIds) if (this.#byCarrierId.get(id) === ref) this.#byCarrierId.delete(id);
  }
}

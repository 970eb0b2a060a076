/**
 * The carrier ids a SQL record store knows to be in its side table, for the rows it saw
 * last. Every row is stored together with its carrier ids, and an id leaves the side table
 * only with its row, so the ids of a row read from the database or written to it are
 * there. A write whose row adds none of them then needs no transaction: one compare-and-set
 * `UPDATE` is the whole step (most writes, receipts and reports among them, add none).
 *
 * @module
 */
import type { MessageRow } from '../record-store.js';

/** How many refs are remembered; the oldest is forgotten first (a forgotten ref costs a transaction, no more). */
const CAPACITY = 20_000;

/** Per ref, the carrier ids known to be stored. */
export class StoredCarrierIds {
  readonly #byRef = new Map<string, ReadonlySet<string>>();

  /** Notes that the carrier ids of each of `rows` are stored. */
  saw(rows: readonly MessageRow[]): void {
    for (const row of rows) {
      if (row.carrierIds.length === 0) continue;
      const ref = row.record.ref;
      this.#byRef.delete(ref);
      this.#byRef.set(ref, new Set(row.carrierIds));
      if (this.#byRef.size > CAPACITY) this.#byRef.delete(this.#byRef.keys().next().value!);
    }
  }

  /** Whether every carrier id of `row` is known to be stored already. */
  covers(row: MessageRow): boolean {
    if (row.carrierIds.length === 0) return true;
    const known = this.#byRef.get(row.record.ref);
    return known !== undefined && row.carrierIds.every((id) => known.has(id));
  }

  /** Forgets `refs` (deleted rows). */
  forget(refs: readonly string[]): void {
    for (const ref of refs) this.#byRef.delete(ref);
  }
}

/**
 * The memory record store's report lane ({@link ReportQueue}): the rows with a pending
 * delivery report, by when it may next be claimed, so that a claim costs what it takes.
 *
 * @module
 */
import type { ClaimOptions } from '../claim-options.js';
import type { MessageRow } from '../record-store.js';
import type { Slot } from './slot.js';
import { SortedSlots, type SlotIndex } from './sorted-slots.js';

/** Claim order: the earlier `reportDueAt` first, then the smaller `orderKey`, then the earlier inserted. */
const dueFirst = (a: Slot, b: Slot): number => a.reportDueAt! - b.reportDueAt! || a.orderKey - b.orderKey || a.seq - b.seq;

/**
 * The rows whose `reportDueAt` is set, in one list by (`reportDueAt`, `orderKey`, `seq`). A
 * report claim is its lease: it moves `reportDueAt` on, and the row's place with it.
 */
export class ReportQueue implements SlotIndex {
  readonly #due = new SortedSlots(dueFirst);

  moves(slot: Slot, after: MessageRow): boolean {
    return slot.reportDueAt !== after.reportDueAt || (after.reportDueAt !== null && slot.orderKey !== after.orderKey);
  }

  add(slot: Slot): void {
    if (slot.reportDueAt !== null) this.#due.add(slot);
  }

  remove(slot: Slot): void {
    if (slot.reportDueAt !== null) this.#due.remove(slot);
  }

  /**
   * Leases up to `limit` rows whose report is due at `now`, earliest first: each slot's row
   * gets `version` one higher, `reportDueAt` at `now + leaseMs`. Returns the rows as stored.
   */
  claim(options: ClaimOptions): MessageRow[] {
    const { now } = options;
    const taken: Slot[] = [];
    for (const slot of this.#due.from()) {
      if (taken.length >= options.limit || slot.reportDueAt! > now) break;
      taken.push(slot);
    }
    // Moved once the walk is done: the walk must not see its list change.
    return taken.map((slot) => {
      this.#due.remove(slot);
      slot.version++;
      slot.reportDueAt = now + options.leaseMs;
      this.#due.add(slot);
      return slot.row();
    });
  }
}

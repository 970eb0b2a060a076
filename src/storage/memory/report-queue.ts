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
    const limit = Math.max(0, options.limit);
    const taken: Slot[] = [];
    for (let top = this.#due.first(); top !== undefined && top.reportDueAt! <= now && taken.length < limit; top = this.#due.first()) {
      this.#due.shift();
      top.version++;
      top.reportDueAt = now + options.leaseMs;
      taken.push(top);
    }
    // Back in only now: with `leaseMs` 0 the same row would come up again in this claim.
    const rows = new Array<MessageRow>(taken.length);
    for (let i = 0; i < taken.length; i++) {
      this.#due.add(taken[i]!);
      rows[i] = taken[i]!.row();
    }
    return rows;
  }
}

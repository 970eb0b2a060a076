/**
 * The memory record store's report lane ({@link ReportQueue}): the rows with a pending
 * delivery report, by when it may next be claimed, so that a claim costs what it takes.
 *
 * @module
 */
import type { ClaimOptions } from '../claim-options.js';
import type { MessageRow } from '../record-store.js';
import { IndexedHeap } from './indexed-heap.js';
import { IN, type Slot } from './slot.js';

/** Claim order: the earlier `reportDueAt` first, then the smaller `orderKey`, then the earlier inserted. */
function dueFirst(a: Slot, b: Slot): boolean {
  if (a.reportDueAt !== b.reportDueAt) return a.reportDueAt! < b.reportDueAt!;
  return a.orderKey < b.orderKey || (a.orderKey === b.orderKey && a.seq < b.seq);
}

/**
 * The rows whose `reportDueAt` is set, in one heap by (`reportDueAt`, `orderKey`, `seq`). A report claim
 * is its lease: it moves `reportDueAt` on, and the row's place with it.
 */
export class ReportQueue {
  readonly #due = new IndexedHeap<Slot>(dueFirst, IN.report);

  /** Whether a write of `after` over the row `before` holds moves the row in the report lane. */
  static changes(before: Slot, after: MessageRow): boolean {
    return before.reportDueAt !== after.reportDueAt || (after.reportDueAt !== null && before.orderKey !== after.orderKey);
  }

  /** Puts `slot` in the lane as its row stands (nowhere when `reportDueAt` is `null`); it must be out of it. */
  place(slot: Slot): void {
    if (slot.reportDueAt !== null) this.#due.add(slot);
  }

  /** Takes `slot` out of the lane. */
  remove(slot: Slot): void {
    this.#due.remove(slot);
  }

  /**
   * Leases up to `limit` rows whose report is due at `now`, earliest first: each slot's row
   * gets `version` one higher, `reportDueAt` at `now + leaseMs`. Returns the rows as stored.
   */
  claim(options: ClaimOptions): MessageRow[] {
    const { now } = options;
    const limit = Math.max(0, options.limit);
    const taken: Slot[] = [];
    for (let top = this.#due.peek(); top !== undefined && top.reportDueAt! <= now && taken.length < limit; top = this.#due.peek()) {
      this.#due.pop();
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

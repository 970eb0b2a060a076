/**
 * The memory record store's report lane ({@link ReportQueue}): the rows with a pending
 * delivery report, by when it may next be claimed, so that a claim costs what it takes.
 *
 * @module
 */
import type { ClaimOptions } from '../claim-options.js';
import type { MessageRow } from '../record-store.js';
import { LazyHeap } from './lazy-heap.js';
import { NO_ENTRY, type Slot, type Stamps } from './slot.js';

/** A row's place in the report lane. */
interface ReportEntry {
  readonly slot: Slot;
  readonly stamp: number;
  /** The row's `reportDueAt` when the entry was made or moved. */
  at: number;
  /** The row's `orderKey`: the report's own due time, the tie-break of equal `reportDueAt`. */
  readonly orderKey: number;
  readonly seq: number;
}

const isCurrent = (entry: ReportEntry): boolean => entry.stamp === entry.slot.report;
/** Claim order: the earlier `reportDueAt` first, then the smaller `orderKey`, then the earlier inserted. */
const dueFirst = (a: ReportEntry, b: ReportEntry): boolean =>
  a.at < b.at || (a.at === b.at && (a.orderKey < b.orderKey || (a.orderKey === b.orderKey && a.seq < b.seq)));

/**
 * The rows whose `reportDueAt` is set, in one heap by (`reportDueAt`, `orderKey`, `seq`). A report claim
 * is its lease: it moves `reportDueAt` on, and the entry with it. A row whose report changes
 * otherwise takes a new stamp; its old entry is skipped when it comes up.
 */
export class ReportQueue {
  readonly #due = new LazyHeap<ReportEntry>(dueFirst, isCurrent);

  constructor(private readonly stamps: Stamps) {}

  /** Puts `slot` in the lane as its row now stands (out of it when `reportDueAt` is `null`). */
  place(slot: Slot): void {
    this.remove(slot);
    const at = slot.row.reportDueAt;
    if (at === null) return;
    slot.report = this.stamps.next();
    this.#due.push({ slot, stamp: slot.report, at, orderKey: slot.row.orderKey, seq: slot.row.seq });
  }

  /** Takes `slot` out of the lane. */
  remove(slot: Slot): void {
    if (slot.report === NO_ENTRY) return;
    slot.report = NO_ENTRY;
    this.#due.forget();
  }

  /**
   * Leases up to `limit` rows whose report is due at `now`, earliest first: each slot gets a
   * new row, `version` one higher, `reportDueAt` at `now + leaseMs`. Returns the new rows.
   */
  claim(options: ClaimOptions): MessageRow[] {
    const { now } = options;
    const limit = Math.max(0, options.limit);
    const taken: ReportEntry[] = [];
    const claimed: MessageRow[] = [];
    for (let top = this.#due.peek(); top !== undefined && top.at <= now && taken.length < limit; top = this.#due.peek()) {
      this.#due.pop();
      const row = top.slot.row;
      const leased: MessageRow = { ...row, version: row.version + 1, reportDueAt: now + options.leaseMs };
      top.slot.row = leased;
      top.at = leased.reportDueAt!;
      taken.push(top);
      claimed.push(leased);
    }
    // Back in only now: with `leaseMs` 0 the same row would come up again in this claim.
    for (const entry of taken) this.#due.push(entry);
    return claimed;
  }
}

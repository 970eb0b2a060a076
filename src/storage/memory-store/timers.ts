/**
 * The memory record store's timers ({@link Timers}): the rows waiting for each sweep, by
 * when it comes due, so that finding the due ones costs what it returns.
 *
 * @module
 */
import type { MessageRow, Timer } from '../record-store.js';
import { LazyHeap } from './lazy-heap.js';
import { NO_ENTRY, type Slot, type Stamps } from './slot.js';

/** A row's place in its timer's heap. */
interface TimerEntry {
  readonly slot: Slot;
  readonly stamp: number;
  readonly at: number;
  readonly seq: number;
}

const isCurrent = (entry: TimerEntry): boolean => entry.stamp === entry.slot.timer;
/** Sweep order: the earlier `timerAt` first, then the earlier inserted. */
const dueFirst = (a: TimerEntry, b: TimerEntry): boolean => a.at < b.at || (a.at === b.at && a.seq < b.seq);

/**
 * One heap per {@link Timer} of the rows waiting for it, by (`timerAt`, `seq`). Finding the
 * due rows pops them and pushes them back (a sweep reads, the library's write moves them
 * on); a row whose timer changes takes a new stamp, and its old entry is skipped when it
 * comes up.
 */
export class Timers {
  readonly #heaps = new Map<Timer, LazyHeap<TimerEntry>>();

  constructor(private readonly stamps: Stamps) {}

  /** Whether a write from `before` to `after` moves the row in the timers. */
  static changes(before: MessageRow, after: MessageRow): boolean {
    return before.timer !== after.timer || before.timerAt !== after.timerAt;
  }

  /** Puts `slot` in its timer's heap as its row now stands (in none when `timer` or `timerAt` is `null`). */
  place(slot: Slot): void {
    this.remove(slot);
    const { timer, timerAt } = slot.row;
    if (timer === null || timerAt === null) return;
    let heap = this.#heaps.get(timer);
    if (heap === undefined) this.#heaps.set(timer, (heap = new LazyHeap(dueFirst, isCurrent)));
    slot.timer = this.stamps.next();
    slot.timerHeap = heap;
    heap.push({ slot, stamp: slot.timer, at: timerAt, seq: slot.row.seq });
  }

  /** Takes `slot` out of the timers. */
  remove(slot: Slot): void {
    if (slot.timer === NO_ENTRY) return;
    slot.timer = NO_ENTRY;
    slot.timerHeap?.forget();
    slot.timerHeap = null;
  }

  /** Up to `limit` rows waiting for `timer` with `timerAt <= at`, earliest first (then `seq`). */
  due(timer: Timer, at: number, limit: number): MessageRow[] {
    const heap = this.#heaps.get(timer);
    if (heap === undefined) return [];
    const taken: TimerEntry[] = [];
    for (let top = heap.peek(); top !== undefined && top.at <= at && taken.length < limit; top = heap.peek()) taken.push(heap.pop()!);
    for (const entry of taken) heap.push(entry);
    return taken.map((entry) => entry.slot.row);
  }
}

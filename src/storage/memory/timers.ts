/**
 * The memory record store's timers ({@link Timers}): the rows waiting for each sweep, by
 * when it comes due, so that finding the due ones costs what it returns.
 *
 * @module
 */
import type { MessageRow, Timer } from '../record-store.js';
import { IndexedHeap } from './indexed-heap.js';
import { IN, type Slot } from './slot.js';

/** Sweep order: the earlier `timerAt` first, then the earlier inserted. */
const dueFirst = (a: Slot, b: Slot): boolean => a.timerAt! < b.timerAt! || (a.timerAt === b.timerAt && a.seq < b.seq);

/**
 * One heap per {@link Timer} of the rows waiting for it, by (`timerAt`, `seq`). Finding the
 * due rows reads the heap without changing it: a sweep reads, and the library's write moves
 * them on.
 */
export class Timers {
  readonly #heaps = new Map<Timer, IndexedHeap<Slot>>();

  /** Whether a write of `after` over the row `before` holds moves the row in the timers. */
  static changes(before: Slot, after: MessageRow): boolean {
    return before.timer !== after.timer || before.timerAt !== after.timerAt;
  }

  /** Puts `slot` in its timer's heap as its row stands (in none when `timer` or `timerAt` is `null`); it must be out of them. */
  place(slot: Slot): void {
    const { timer, timerAt } = slot;
    if (timer === null || timerAt === null) return;
    let heap = this.#heaps.get(timer);
    if (heap === undefined) this.#heaps.set(timer, (heap = new IndexedHeap(dueFirst, IN.timer)));
    heap.add(slot);
  }

  /** Takes `slot` out of the timers (its row is still the one it was placed with). */
  remove(slot: Slot): void {
    const timer = slot.timer;
    if (timer !== null) this.#heaps.get(timer)?.remove(slot);
  }

  /** Up to `limit` rows waiting for `timer` with `timerAt <= at`, earliest first (then `seq`). */
  due(timer: Timer, at: number, limit: number): MessageRow[] {
    const heap = this.#heaps.get(timer);
    if (heap === undefined) return [];
    const taken = heap.firstWhile(limit, (slot) => slot.timerAt! <= at);
    const rows = new Array<MessageRow>(taken.length);
    for (let i = 0; i < taken.length; i++) rows[i] = taken[i]!.row();
    return rows;
  }
}

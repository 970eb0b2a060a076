/**
 * The memory record store's timers ({@link Timers}): the rows waiting for each sweep, by
 * when it comes due, so that finding the due ones costs what it returns.
 *
 * @module
 */
import type { MessageRow, Timer } from '../record-store.js';
import type { Slot } from './slot.js';
import { SlotGroups } from './sorted-slots.js';

/**
 * One list per {@link Timer} of the rows waiting for it, by (`timerAt`, `seq`). Finding the
 * due rows reads the list without changing it: a sweep reads, and the library's write moves
 * them on.
 */
export class Timers extends SlotGroups<Timer> {
  constructor() {
    super({
      order: (a, b) => a.timerAt! - b.timerAt! || a.seq - b.seq,
      key: (slot: Slot) => (slot.timerAt === null ? null : slot.timer),
      moves: (slot, after) => slot.timer !== after.timer || slot.timerAt !== after.timerAt,
    });
  }

  /** Up to `limit` rows waiting for `timer` with `timerAt <= at`, earliest first (then `seq`). */
  due(timer: Timer, at: number, limit: number): MessageRow[] {
    const rows: MessageRow[] = [];
    for (const slot of this.get(timer)?.from() ?? []) {
      if (rows.length === limit || slot.timerAt! > at) break;
      rows.push(slot.row());
    }
    return rows;
  }
}

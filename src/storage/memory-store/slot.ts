/**
 * What the memory record store keeps per message ({@link Slot}): the row as last stored,
 * and the stamps that tell the entries of its queues that still stand for it from those
 * left behind when it moved on.
 *
 * @module
 */
import type { MessageRow } from '../record-store.js';
import type { Member } from './queue-members.js';

/** A heap that counts its stale entries (`LazyHeap`). */
export interface Forgetful {
  /** Notes that one of its entries went stale. */
  forget(): void;
}

/** A stamp no entry carries: a slot's stamp set to it makes every entry of that lane stale. */
export const NO_ENTRY = 0;

/**
 * One stored message. `row` is replaced, never changed, on every write and claim: the
 * store hands out the row objects it holds. Each lane (the submit queue, the report queue,
 * the timers) holds at most one current entry per slot, the one carrying the slot's stamp
 * for that lane; a row that moves on in a lane takes a new stamp, and its old entry is
 * skipped wherever it is. A deleted slot's stamps are all {@link NO_ENTRY}.
 */
export class Slot {
  /** The stamp of its current submit-queue entry, {@link NO_ENTRY} when out of the queue. */
  lane = NO_ENTRY;
  /** The heap its current submit-queue entry is in, told when the entry goes stale. */
  laneHeap: Forgetful | null = null;
  /** The stamp of its current report-queue entry. */
  report = NO_ENTRY;
  /** The stamp of its current timer entry. */
  timer = NO_ENTRY;
  /** The heap its current timer entry is in, told when the entry goes stale. */
  timerHeap: Forgetful | null = null;
  /** Its membership of the queued counts while `row.queue` is not `null`. */
  member: Member | null = null;

  constructor(public row: MessageRow) {}
}

/** Numbers entries, store-wide: each pushed entry takes a new stamp. */
export class Stamps {
  #last = NO_ENTRY;

  /** A stamp never given before. */
  next(): number {
    return ++this.#last;
  }
}

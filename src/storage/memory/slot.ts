/**
 * What the memory record store keeps per message ({@link Slot}): the row as last stored, and
 * the slot's positions in the heaps that order it.
 *
 * @module
 */
import type { MessageRow } from '../record-store.js';
import type { IndexedHeap, Positioned } from './indexed-heap.js';

/** The `positions` index of each heap a slot may be in (one heap per index at a time). */
export const IN = {
  /** The submit queue: a class's ready heap, the waiting heap or the lapsed heap (submit-queue.ts). */
  lane: 0,
  /** The report lane (report-queue.ts). */
  report: 1,
  /** Its timer's heap (timers.ts). */
  timer: 2,
  /** Its class's rows by acceptance (queue-members.ts). */
  classByAge: 3,
  /** Its principal's rows of its class by acceptance. */
  ownByAge: 4,
  /** Its class's rows by `orderKey`. */
  classByKey: 5,
  /** Its principal's rows of its class by `orderKey`. */
  ownByKey: 6,
} as const;

/**
 * One stored message, an item of the heaps that order it. Its row is replaced
 * ({@link Slot.store}), never changed, on every write and claim: the store hands out the row
 * objects it holds. The heaps compare slots by their rows' fields, so a slot is taken out of
 * a heap before its row changes a field that heap orders by, and put back after. The fields
 * the largest heaps compare most are copied onto the slot, so that a comparison reads one
 * object rather than two.
 */
export class Slot implements Positioned {
  /** Its position in each heap (by {@link IN}), -1 when out. */
  readonly positions = [-1, -1, -1, -1, -1, -1, -1];
  /** The submit-queue heap it is in, if any. */
  lane: IndexedHeap<Slot> | null = null;
  /** In the waiting heap, when its row may be claimed; in the lapsed heap, when its validity ended. */
  laneAt = 0;
  /** When its row was accepted (`record.sendAt ?? record.createdAt`), while it is counted as queued. */
  acceptedAt = 0;

  /** `row.orderKey`. */
  orderKey: number;
  /** `row.seq`. */
  seq: number;

  constructor(public row: MessageRow) {
    this.orderKey = row.orderKey;
    this.seq = row.seq;
  }

  /** Makes `row` the slot's row. */
  store(row: MessageRow): void {
    this.row = row;
    this.orderKey = row.orderKey;
    this.seq = row.seq;
  }
}

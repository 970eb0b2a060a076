/**
 * What the memory record store keeps per message ({@link Slot}): the row as last stored,
 * field by field, and the slot's positions in the heaps that order it.
 *
 * @module
 */
import type { MessageRecord } from '../message-record.js';
import type { MessageRow, RowBook, Timer } from '../record-store.js';
import type { IndexedHeap, Positioned } from './indexed-heap.js';

/** The position index of each heap a slot may be in (one heap per index at a time). */
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

/** Shared by every slot whose row has no carrier id. */
const NO_CARRIER_IDS: readonly string[] = [];

/** `ids` as a slot keeps them: the one id itself when there is one (most rows), else the array. */
function keptIds(ids: readonly string[]): string | readonly string[] {
  return ids.length === 1 ? ids[0]! : ids.length === 0 ? NO_CARRIER_IDS : ids;
}

/**
 * One stored message, an item of the heaps that order it. It holds the stored row's fields
 * itself, and its positions in the heaps as fields, rather than a row object and an array:
 * a slot lives as long as its message is retained, and each object kept per message costs
 * marking time at every full collection. A read hands out a new row ({@link Slot.row}), which
 * the caller owns; a write copies the given row's fields in ({@link Slot.store}). The heaps
 * compare slots by these fields, so a slot is taken out of a heap before a field that heap
 * orders by changes, and put back after.
 */
export class Slot implements Positioned {
  // The stored row's fields, as `MessageRow` names them (its carrier ids aside, below).
  record: MessageRecord;
  book: RowBook;
  version: number;
  seq: number;
  queue: number | null;
  orderKey: number;
  dueAt: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  reportDueAt: number | null;
  timer: Timer | null;
  timerAt: number | null;
  /** The row's carrier ids: the one id itself when it has one, else the array ({@link Slot.carrierIdList}). */
  carrierIds: string | readonly string[];

  /** The submit-queue heap it is in, if any. */
  lane: IndexedHeap<Slot> | null = null;
  /** In the waiting heap, when its row may be claimed; in the lapsed heap, when its validity ended. */
  laneAt = 0;
  /** When its row was accepted (`record.sendAt ?? record.createdAt`), while it is counted as queued. */
  acceptedAt = 0;

  // Its position in each heap (by {@link IN}), -1 when out.
  #inLane = -1;
  #inReport = -1;
  #inTimer = -1;
  #inClassByAge = -1;
  #inOwnByAge = -1;
  #inClassByKey = -1;
  #inOwnByKey = -1;

  /** A slot holding `row` (its `version` and `seq` as given). */
  constructor(row: MessageRow) {
    this.record = row.record;
    this.book = row.book;
    this.version = row.version;
    this.seq = row.seq;
    this.queue = row.queue;
    this.orderKey = row.orderKey;
    this.dueAt = row.dueAt;
    this.leaseOwner = row.leaseOwner;
    this.leaseUntil = row.leaseUntil;
    this.reportDueAt = row.reportDueAt;
    this.timer = row.timer;
    this.timerAt = row.timerAt;
    this.carrierIds = keptIds(row.carrierIds);
  }

  /** Makes `row` the slot's row, at `version` (its `seq` stays the slot's). */
  store(row: MessageRow, version: number): void {
    this.record = row.record;
    this.book = row.book;
    this.version = version;
    this.queue = row.queue;
    this.orderKey = row.orderKey;
    this.dueAt = row.dueAt;
    this.leaseOwner = row.leaseOwner;
    this.leaseUntil = row.leaseUntil;
    this.reportDueAt = row.reportDueAt;
    this.timer = row.timer;
    this.timerAt = row.timerAt;
    if (row.carrierIds !== this.carrierIds) this.carrierIds = keptIds(row.carrierIds);
  }

  /** The row's carrier ids, as an array (a new one when the slot keeps one id). */
  carrierIdList(): readonly string[] {
    const ids = this.carrierIds;
    return typeof ids === 'string' ? [ids] : ids;
  }

  /** The stored row, as a new object the caller owns (its record and book shared: neither side changes them). */
  row(): MessageRow {
    return {
      record: this.record,
      book: this.book,
      version: this.version,
      seq: this.seq,
      queue: this.queue,
      orderKey: this.orderKey,
      dueAt: this.dueAt,
      leaseOwner: this.leaseOwner,
      leaseUntil: this.leaseUntil,
      reportDueAt: this.reportDueAt,
      timer: this.timer,
      timerAt: this.timerAt,
      carrierIds: this.carrierIdList(),
    };
  }

  /** Its position in heap `heap` (by {@link IN}), -1 when out. */
  position(heap: number): number {
    switch (heap) {
      case IN.lane:
        return this.#inLane;
      case IN.report:
        return this.#inReport;
      case IN.timer:
        return this.#inTimer;
      case IN.classByAge:
        return this.#inClassByAge;
      case IN.ownByAge:
        return this.#inOwnByAge;
      case IN.classByKey:
        return this.#inClassByKey;
      default:
        return this.#inOwnByKey;
    }
  }

  /** Sets its position in heap `heap` (by {@link IN}). */
  setPosition(heap: number, at: number): void {
    switch (heap) {
      case IN.lane:
        this.#inLane = at;
        break;
      case IN.report:
        this.#inReport = at;
        break;
      case IN.timer:
        this.#inTimer = at;
        break;
      case IN.classByAge:
        this.#inClassByAge = at;
        break;
      case IN.ownByAge:
        this.#inOwnByAge = at;
        break;
      case IN.classByKey:
        this.#inClassByKey = at;
        break;
      default:
        this.#inOwnByKey = at;
    }
  }
}

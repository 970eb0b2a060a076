/**
 * What the memory record store keeps per message ({@link Slot}): the row as last stored,
 * field by field, and what its indexes keep on it.
 *
 * @module
 */
import type { MessageRecord } from '../message-record.js';
import type { MessageRow, RowBook, Timer } from '../record-store.js';

/** Shared by every slot whose row has no carrier id. */
const NO_CARRIER_IDS: readonly string[] = [];

/** `ids` as a slot keeps them: the one id itself when there is one (most rows), else the array. */
function keptIds(ids: readonly string[]): string | readonly string[] {
  return ids.length === 1 ? ids[0]! : ids.length === 0 ? NO_CARRIER_IDS : ids;
}

/** When `row` was accepted, as `countQueued` reports it: its `sendAt`, else its `createdAt`. */
export function acceptedAt(row: MessageRow): number {
  return row.record.sendAt ?? row.record.createdAt;
}

/**
 * One stored message, an item of the sorted lists that order it. It holds the stored row's
 * fields itself rather than a row object: a slot lives as long as its message is retained,
 * and each object kept per message costs marking time at every full collection. A read
 * hands out a new row ({@link Slot.row}), which the caller owns; a write copies the given
 * row's fields in ({@link Slot.store}). The lists find slots by these fields, so a slot is
 * taken out of a list before a field that list orders by changes, and put back after.
 */
export class Slot {
  // The stored row's fields, as `MessageRow` names them (its carrier ids aside, below).
  record!: MessageRecord;
  book!: RowBook;
  version!: number;
  readonly seq: number;
  queue!: number | null;
  orderKey!: number;
  dueAt!: number;
  leaseOwner!: string | null;
  leaseUntil!: number | null;
  reportDueAt!: number | null;
  timer!: Timer | null;
  timerAt!: number | null;
  /** The row's carrier ids: the one id itself when it has one, else the array ({@link Slot.carrierIdList}). */
  carrierIds!: string | readonly string[];

  /** When its row was accepted ({@link acceptedAt}), which queue-members.ts orders by. */
  acceptedAt!: number;

  /** The submit-queue list it is in, if any (submit-queue.ts). */
  lane: Lane | null = null;
  /** In the waiting list, when its row may be claimed; in the lapsed list, when its validity ended. */
  laneAt = 0;
  /** Its report key (`MessageWrite.reported`), given by the write that ended its message; `null` before. */
  reportKey: number | null = null;

  /** A slot holding `row` at version 0, inserted as `seq`. */
  constructor(row: MessageRow, seq: number) {
    this.seq = seq;
    this.store(row, 0);
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
    this.acceptedAt = acceptedAt(row);
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
}

/** List order: the earlier `record.createdAt` first, then the earlier inserted (read backwards: newest first). */
export const newestLast = (a: Slot, b: Slot): number => a.record.createdAt - b.record.createdAt || a.seq - b.seq;

/** A list a slot is in and can be taken out of: the submit queue's lanes (submit-queue.ts), each sorted-slots.ts's list. */
export interface Lane {
  /** Takes `slot` out of the list. */
  remove(slot: Slot): unknown;
}

/**
 * Delivery reports part by part (a message whose profile asks `reportPer: 'part'`): each
 * part's report is born when the part ends (its receipt, or the message's end for the parts
 * that had none), so a message of n parts gets n reports. They share the row's one report
 * slot (`record.callback`, `book.reportUid`, `reportDueAt`): one is pending at a time, the
 * others wait in `book.partReports` in the order their parts ended, and the next is born
 * when the one before it is finished (delivered or given up on). So they reach the receiver
 * one after another, in that order, each signed and retried like any report, and a crash
 * loses none: the queue is in the row, written in the step that ended each part.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { InsertLease } from '../storage/claim-options.js';
import type { LeasedReport, MessageRecord } from '../storage/contract.js';
import type { MessageRow, RowBook } from '../storage/record-store.js';

/** Whether `record` is reported part by part (its profile asked it, and it has a callback URL). */
export function reportsPerPart(record: MessageRecord): boolean {
  return record.reportPer === 'part' && record.callbackUrl !== null;
}

/** The row fields a change to the report slot sets. */
export interface PartReportChanges {
  book: RowBook;
  reportDueAt: number | null;
  /** The report's place among those due at one time: its due time, set only out of the submit queue. */
  orderKey?: number;
  /** The report born leased under the receipt's lease, if one was. */
  leasedReport?: LeasedReport;
}

/** `book` with the report slot on part `part` (uid `uid`) and the parts `waiting` behind it. */
function withSlot(book: RowBook, uid: string | null, part: number | undefined, waiting: readonly number[]): RowBook {
  const next: RowBook = { weight: book.weight, charge: book.charge, replacedCarrierIds: book.replacedCarrierIds, reportUid: uid };
  // Only when set: a row without them has no such keys, as it was stored.
  if (part !== undefined) next.reportPart = part;
  if (waiting.length > 0) next.partReports = [...waiting];
  return next;
}

/**
 * The reports of parts `ended` (indexes, in the order they ended) of `row`, whose next
 * version (`book`, `record`) is being built (the record's `callback` is set here when a
 * report is born): the first is born now (pending, due at `now`, or leased under `lease`)
 * unless a report of the row is pending already; the rest wait behind it. `outOfQueue`: the
 * next row is out of the submit queue, so its order key may be the report's.
 */
export function partReportsBorn(
  row: MessageRow,
  book: RowBook,
  record: MessageRecord,
  ended: readonly number[],
  now: number,
  outOfQueue: boolean,
  lease?: InsertLease,
): PartReportChanges {
  const waiting = [...(book.partReports ?? []), ...ended];
  if (row.record.callback?.state === 'pending' || waiting.length === 0) {
    return { book: withSlot(book, book.reportUid, book.reportPart, waiting), reportDueAt: row.reportDueAt };
  }
  return bornNext(book, record, waiting, now, outOfQueue, lease);
}

/**
 * After the pending report of `row` finished: the next waiting part's report is born now, due
 * at `now`, with `record` (the row's next record) pending it; `null` when none waits.
 */
export function nextPartReport(row: MessageRow, record: MessageRecord, now: number): PartReportChanges | null {
  const waiting = row.book.partReports;
  if (waiting === undefined || waiting.length === 0) return null;
  return bornNext(row.book, record, waiting, now, row.queue === null);
}

/** Births the report of `waiting[0]` on `record`, the others still waiting. */
function bornNext(book: RowBook, record: MessageRecord, waiting: readonly number[], now: number, outOfQueue: boolean, lease?: InsertLease): PartReportChanges {
  const [part, ...rest] = waiting;
  const uid = randomUUID();
  record.callback = { state: 'pending', attempts: 0, lastStatusCode: null, lastError: null, nextAttemptAt: now };
  const changes: PartReportChanges = { book: withSlot(book, uid, part, rest), reportDueAt: lease === undefined ? now : lease.until };
  // Out of the submit queue the order key is the report's; in it, the message's place.
  if (outOfQueue) changes.orderKey = now;
  if (lease !== undefined) changes.leasedReport = { uid, until: lease.until, part: part! };
  return changes;
}

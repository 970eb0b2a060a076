/**
 * How the ledger builds rows: a new message's row, the next version of a stored row (with
 * the timer its new state waits for), and the row that ends a message with its delivery
 * report and its refund. Rows are never changed in place: a store may hand out the very
 * objects it keeps, and the ledger keeps rows of its own (leased-rows.ts), so every change
 * is a new row sharing what did not change.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { PRIORITY_RANK } from '../lifecycle/fair-tags.js';
import { refundUnits } from '../lifecycle/credit.js';
import { isTerminal, type Outcome } from '../lifecycle/states.js';
import { QueuedRecord } from '../storage/queued-record.js';
import type { CallbackState } from '../storage/callback-record.js';
import type { CreditCharge } from '../storage/credit-record.js';
import type { InsertLease } from '../storage/claim-options.js';
import type { MessageRecord, NewMessage, Priority, Transition } from '../storage/contract.js';
import type { MessageRow, Timer } from '../storage/record-store.js';
import { copyRecord } from './copy-record.js';

/** The submit queue's class rank of `priority`; a message from an untyped caller without one is bulk. */
export function rankOf(priority: Priority | undefined): number {
  return (priority === undefined ? undefined : PRIORITY_RANK[priority]) ?? PRIORITY_RANK.bulk;
}

/** The weight a fair tag is spaced by: the given one, or 1 when it is not a positive number. */
export function weightOf(weight: number): number {
  return weight > 0 && Number.isFinite(weight) ? weight : 1;
}

/**
 * The sweep a message waits for in its state, and when: a scheduled one its `sendAt`; a
 * queued one with a validity its `validUntil`; a submitted one its receipts (from
 * `updatedAt`); an ended one its purge (from `updatedAt`), once its report is no longer
 * pending (a pending report keeps its message: no timer until it finishes).
 */
export function timerOf(record: MessageRecord): { timer: Timer | null; timerAt: number | null } {
  switch (record.state) {
    case 'scheduled':
      return { timer: 'scheduled', timerAt: record.sendAt ?? record.createdAt };
    case 'queued':
      return record.validUntil === null || record.validUntil === undefined ? { timer: null, timerAt: null } : { timer: 'validity', timerAt: record.validUntil };
    case 'submitted':
      return { timer: 'receipt', timerAt: record.updatedAt };
    default:
      return record.callback?.state === 'pending' ? { timer: null, timerAt: null } : { timer: 'purge', timerAt: record.updatedAt };
  }
}

/**
 * The row of `message` as inserted: `queued` (or `scheduled`), due at its `createdAt`,
 * leased under `lease` if given, placed at `orderKey` in its class (scheduled ones join the
 * submit queue when due), charged its `smsCount` units under `credit`'s policy if given.
 */
export function newRow(message: NewMessage, orderKey: number, lease: InsertLease | undefined, credit: CreditCharge | undefined): MessageRow {
  const record: MessageRecord = new QueuedRecord(message);
  // A caller without types may leave it out: bulk, the default.
  record.priority = message.priority ?? 'bulk';
  const { timer, timerAt } = timerOf(record);
  return {
    record,
    book: {
      weight: weightOf(message.weight),
      charge: credit === undefined ? null : { units: message.smsCount, refunds: credit.refunds },
      replacedCarrierIds: [],
      reportUid: null,
    },
    version: 0,
    // Set by the store; a value here is ignored.
    seq: 0,
    queue: record.state === 'queued' ? rankOf(record.priority) : null,
    orderKey,
    dueAt: message.createdAt,
    leaseOwner: lease?.owner ?? null,
    leaseUntil: lease?.until ?? null,
    reportDueAt: null,
    timer,
    timerAt,
    carrierIds: [],
  };
}

/** The fields of a row a change may set (the record as a whole, with the timer derived from it). */
export type RowChanges = Partial<Omit<MessageRow, 'version' | 'seq' | 'timer' | 'timerAt'>>;

/** `row` with `changes`, one version higher, and the timer its (new) record waits for. */
export function nextRow(row: MessageRow, changes: RowChanges): MessageRow {
  const next: MessageRow = { ...row, ...changes, version: row.version + 1 };
  const { timer, timerAt } = timerOf(next.record);
  next.timer = timer;
  next.timerAt = timerAt;
  return next;
}

/** What ending a message writes: its row, the refund given back with it, and the transition. */
export interface Ending {
  /** The ended row. */
  row: MessageRow;
  /** Units its charge gives back (`refundUnits`), 0 when none. */
  refund: number;
  /** What the caller is told (its message a copy the caller may change). */
  transition: Transition;
}

/**
 * Ends the message of `row` (not terminal) with `outcome` at `now`: out of the submit queue,
 * its lease ended, its charge settled, and with a callback URL its delivery report born
 * pending in the same write (due at `now`, or leased until `reportLease.until`, then named
 * in the transition; its `orderKey` is then its due time, which orders it among the
 * reports due at one `reportDueAt`). `record` overrides the record the ending starts from (a receipt's
 * new part outcome).
 */
export function endRow(row: MessageRow, outcome: Outcome, now: number, reportLease?: InsertLease, record: MessageRecord = row.record): Ending {
  const previousState = record.state;
  const ended: MessageRecord = { ...record, state: outcome.state, statusReason: outcome.reason, statusDescription: outcome.description, updatedAt: now };
  const charge = row.book.charge;
  // Settled here, in the write that ends it, so the refund is given exactly once.
  const refund = charge === null ? 0 : refundUnits(previousState, ended, charge.refunds);
  let book = charge === null ? row.book : { ...row.book, charge: null };
  let reportDueAt: number | null = null;
  let orderKey = row.orderKey;
  if (ended.callbackUrl !== null) {
    const callback: CallbackState = { state: 'pending', attempts: 0, lastStatusCode: null, lastError: null, nextAttemptAt: now };
    ended.callback = callback;
    book = { ...book, reportUid: randomUUID() };
    reportDueAt = reportLease === undefined ? now : reportLease.until;
    // Its place among the reports due at one time: its own due time, which a lease keeps.
    orderKey = now;
  }
  const next = nextRow(row, { record: ended, book, queue: null, orderKey, leaseOwner: null, leaseUntil: null, reportDueAt });
  const transition: Transition = { message: copyRecord(ended), previousState };
  if (reportLease !== undefined && book.reportUid !== null && ended.callbackUrl !== null) transition.leasedReport = { uid: book.reportUid, until: reportLease.until };
  return { row: next, refund, transition };
}

/** Whether the message of `row` has ended (no state follows). */
export function hasEnded(row: MessageRow): boolean {
  return isTerminal(row.record.state);
}

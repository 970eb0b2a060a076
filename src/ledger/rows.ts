/**
 * How the ledger builds rows: a new message's row, the next version of a stored row (with
 * the timer its new state waits for), and the row that ends a message with its delivery
 * report and its refund. Rows are never changed in place: a store may hand out the very
 * objects it keeps, and the ledger keeps rows of its own (known-rows.ts), so every change
 * is a new row sharing what did not change.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { PRIORITY_RANK } from '../lifecycle/fair-tags.js';
import { refundUnits } from '../lifecycle/credit.js';
import { isRedacted, redactAt, redactsAt, redactText } from '../lifecycle/retain-text.js';
import { isTerminal, type MessageState, type Outcome } from '../lifecycle/states.js';
import { QueuedRecord } from './queued-record.js';
import type { CreditCharge } from '../storage/credit-record.js';
import type { InsertLease } from '../storage/claim-options.js';
import type { MessageRecord, NewMessage, Priority, Transition } from '../storage/contract.js';
import type { MessageRow, RowBook, Timer } from '../storage/record-store.js';
import { copyRecord, recordFields } from './copy-record.js';
import { partReportsBorn, reportsPerPart } from './part-reports.js';

/** The submit queue's class rank of `priority`; a message from an untyped caller without one is bulk. */
export function rankOf(priority: Priority | undefined): number {
  return (priority === undefined ? undefined : PRIORITY_RANK[priority]) ?? PRIORITY_RANK.bulk;
}

/** The weight a fair tag is spaced by: the given one, or 1 when it is not a positive number. */
export function weightOf(weight: number): number {
  return weight > 0 && Number.isFinite(weight) ? weight : 1;
}

/**
 * The sweep a message waits for in its state (see {@link timerAtOf} for when): a scheduled
 * one its promotion; a queued one with a validity its expiry; a submitted one its receipts;
 * an ended one its purge, once its report is no longer pending (a pending report keeps its
 * message: no timer until it finishes), or first the redaction of its text when its
 * `retainText` (`days:N`) has not come yet (lifecycle/retain-text.ts).
 */
export function timerOf(record: MessageRecord): Timer | null {
  switch (record.state) {
    case 'scheduled':
      return 'scheduled';
    case 'queued':
      return record.validUntil === null || record.validUntil === undefined ? null : 'validity';
    case 'submitted':
      return 'receipt';
    default:
      if (record.callback !== null && record.callback.state === 'pending') return null;
      return redactAt(record) !== null && !isRedacted(record) ? 'redact' : 'purge';
  }
}

/** When the timer of `record` ({@link timerOf}) comes due: its `sendAt`, its `validUntil`, its redaction, or its `updatedAt`. */
export function timerAtOf(record: MessageRecord): number | null {
  switch (timerOf(record)) {
    case 'scheduled':
      return record.sendAt ?? record.createdAt;
    case 'validity':
      return record.validUntil!;
    case 'redact':
      return redactAt(record);
    case null:
      return null;
    default:
      return record.updatedAt;
  }
}

// Shared by every new row: rows are never changed in place, a change makes a new array.
const NONE_REPLACED: RowBook['replacedCarrierIds'] = [];
const NO_CARRIER_IDS: readonly string[] = [];

/**
 * The row of `message` as inserted: `queued` (or `scheduled`), due at its `createdAt`,
 * leased under `lease` if given, placed at `orderKey` in its class (scheduled ones join the
 * submit queue when due), charged its `smsCount` units under `credit`'s policy if given.
 */
export function newRow(message: NewMessage, orderKey: number, lease: InsertLease | undefined, credit: CreditCharge | undefined): MessageRow {
  const record: MessageRecord = new QueuedRecord(message);
  // A caller without types may leave it out: bulk, the default.
  record.priority = message.priority ?? 'bulk';
  return {
    record,
    book: {
      weight: weightOf(message.weight),
      charge: credit === undefined ? null : { units: message.smsCount, refunds: credit.refunds },
      replacedCarrierIds: NONE_REPLACED,
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
    timer: timerOf(record),
    timerAt: timerAtOf(record),
    carrierIds: NO_CARRIER_IDS,
  };
}

/** The fields of a row a change may set (the record as a whole, with the timer derived from it). */
export type RowChanges = Partial<Omit<MessageRow, 'version' | 'seq' | 'timer' | 'timerAt'>>;

/**
 * `row` with `changes`, one version higher, and the timer its (new) record waits for. Field
 * by field rather than by spread: every row then has one shape, and this runs on every write.
 */
export function nextRow(row: MessageRow, changes: RowChanges): MessageRow {
  const record = changes.record ?? row.record;
  return {
    record,
    book: changes.book ?? row.book,
    version: row.version + 1,
    seq: row.seq,
    queue: changes.queue !== undefined ? changes.queue : row.queue,
    orderKey: changes.orderKey ?? row.orderKey,
    dueAt: changes.dueAt ?? row.dueAt,
    leaseOwner: changes.leaseOwner !== undefined ? changes.leaseOwner : row.leaseOwner,
    leaseUntil: changes.leaseUntil !== undefined ? changes.leaseUntil : row.leaseUntil,
    reportDueAt: changes.reportDueAt !== undefined ? changes.reportDueAt : row.reportDueAt,
    timer: timerOf(record),
    timerAt: timerAtOf(record),
    carrierIds: changes.carrierIds ?? row.carrierIds,
  };
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
 * reports due at one `reportDueAt`). `begun`, when given, is the record's next version the
 * caller has begun (a receipt's new part outcome), a new object the ending completes.
 */
export function endRow(row: MessageRow, outcome: Outcome, now: number, reportLease?: InsertLease, begun?: MessageRecord): Ending {
  const previousState = row.record.state;
  const ended = begun ?? recordFields(row.record);
  ended.state = outcome.state;
  ended.statusReason = outcome.reason;
  ended.statusDescription = outcome.description;
  ended.updatedAt = now;
  // In the write that ends it: `until-final`, or `days:N` whose time has already come.
  if (redactsAt(ended, now)) redactText(ended);
  const book = row.book;
  // Settled here, in the write that ends it, so the refund is given exactly once.
  const refund = book.charge === null ? 0 : refundUnits(previousState, ended, book.charge.refunds);
  if (reportsPerPart(ended)) return endPartByPart(row, ended, previousState, refund, now, reportLease);
  let reportUid = book.reportUid;
  let reportDueAt: number | null = null;
  let orderKey = row.orderKey;
  if (ended.callbackUrl !== null) {
    ended.callback = { state: 'pending', attempts: 0, lastStatusCode: null, lastError: null, nextAttemptAt: now };
    reportUid = randomUUID();
    reportDueAt = reportLease === undefined ? now : reportLease.until;
    // Its place among the reports due at one time: its own due time, which a lease keeps.
    orderKey = now;
  }
  const nextBook = book.charge === null && reportUid === book.reportUid ? book : { ...book, charge: null, reportUid };
  const next = nextRow(row, { record: ended, book: nextBook, queue: null, orderKey, leaseOwner: null, leaseUntil: null, reportDueAt });
  const transition: Transition = { message: copyRecord(ended), previousState };
  if (reportLease !== undefined && reportDueAt !== null && reportUid !== null) transition.leasedReport = { uid: reportUid, until: reportLease.until };
  return { row: next, refund, transition };
}

/**
 * {@link endRow} for a message reported part by part: the parts that had no receipt of their
 * own (the one whose receipt ends it among them) end with it, and each gets its report
 * (part-reports.ts); a report already pending stays pending.
 */
function endPartByPart(row: MessageRow, ended: MessageRecord, previousState: MessageState, refund: number, now: number, reportLease: InsertLease | undefined): Ending {
  const unreported: number[] = [];
  for (const part of row.record.parts) if (part.outcome === null) unreported.push(part.index);
  const book = row.book.charge === null ? row.book : { ...row.book, charge: null };
  const slot = partReportsBorn(row, book, ended, unreported, now, true, reportLease);
  const next = nextRow(row, {
    record: ended, book: slot.book, queue: null, orderKey: slot.orderKey ?? row.orderKey, leaseOwner: null, leaseUntil: null, reportDueAt: slot.reportDueAt,
  });
  const transition: Transition = { message: copyRecord(ended), previousState };
  if (slot.leasedReport !== undefined) transition.leasedReport = slot.leasedReport;
  return { row: next, refund, transition };
}

/** Whether the message of `row` has ended (no state follows). */
export function hasEnded(row: MessageRow): boolean {
  return isTerminal(row.record.state);
}

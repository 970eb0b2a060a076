/**
 * Delivery reports, as the ledger keeps them in their message's row: `record.callback` is
 * the report's state, `book.reportUid` its uid, `reportDueAt` its claim lane (a claim
 * moves it to the end of its lease) and `orderKey` its own due time (the message has left
 * the submit queue), so reports whose leases end together come back in their due order.
 * Claims go to the store (`claimReports`); handing a report back and recording an attempt
 * are compare-and-set writes of the row.
 *
 * A report is named by its uid alone, and a store finds rows by ref: the ledger remembers
 * the row of each report it claimed or stored leased until its attempt is recorded. Only
 * the holder of a report's lease hands it back or records its attempt, and it got the
 * report from this ledger, so the row is known; a uid not known here is ignored, and the
 * report comes back when its lease ends.
 *
 * @module
 */
import type { CallbackAttempt, CallbackState, ClaimOptions, DueCallback } from '../storage/contract.js';
import type { MessageRow, RecordStore } from '../storage/record-store.js';
import type { Decision, RowWriter } from './compare-and-set.js';
import { copyRecord, recordFields } from './copy-record.js';
import { nextPartReport } from './part-reports.js';
import { nextRow } from './rows.js';

/** How many reports in flight are remembered at most: beyond it the oldest are forgotten. */
export const REPORTS_IN_FLIGHT_LIMIT = 100_000;

/** Whether `row` holds the pending report `uid`. */
function pendingReport(row: MessageRow | null, uid: string): row is MessageRow & { record: { callback: CallbackState } } {
  return row !== null && row.book.reportUid === uid && row.record.callback?.state === 'pending';
}

/** The reports of a ledger (see the module's TSDoc). */
export class Reports {
  /**
   * The row of each report leased through this ledger and not attempted yet, by uid, oldest
   * first, as last known here: its attempt is then one write with no read before it.
   */
  readonly #inFlight = new Map<string, MessageRow>();

  constructor(
    private readonly store: RecordStore,
    private readonly writer: RowWriter,
    private readonly limit = REPORTS_IN_FLIGHT_LIMIT,
  ) {}

  /** Remembers that report `uid`, of `row`, is leased through this ledger. */
  leased(uid: string, row: MessageRow): void {
    this.#inFlight.delete(uid);
    this.#inFlight.set(uid, row);
    if (this.#inFlight.size > this.limit) this.#inFlight.delete(this.#inFlight.keys().next().value!);
  }

  /** Leases up to `limit` due pending reports, earliest due first. */
  async claim(options: ClaimOptions): Promise<DueCallback[]> {
    const rows = await this.store.claimReports(options);
    const due: DueCallback[] = [];
    for (const row of rows) {
      const uid = row.book.reportUid;
      const callback = row.record.callback;
      if (uid === null || callback === null) continue;
      this.leased(uid, row);
      const report: DueCallback = { uid, attempts: callback.attempts, message: copyRecord(row.record) };
      if (row.book.reportPart !== undefined) report.part = row.book.reportPart;
      due.push(report);
    }
    return due;
  }

  /** Makes each of `uids` still pending claimable again at `until`, no attempt counted. */
  async defer(uids: readonly string[], until: number): Promise<void> {
    for (const uid of uids) {
      const known = this.#inFlight.get(uid);
      if (known === undefined) continue;
      const deferred = await this.writer.update(
        known.record.ref,
        (row): Decision<MessageRow | null> => {
          if (!pendingReport(row, uid)) return { result: null };
          const next = nextRow(row, { reportDueAt: until });
          return { result: next, row: next };
        },
        known,
      );
      if (deferred === null) this.#inFlight.delete(uid);
      else if (this.#inFlight.has(uid)) this.#inFlight.set(uid, deferred);
    }
  }

  /**
   * Records one attempt of report `uid` and ends its lease: a retry makes it due at the
   * attempt's `nextAttemptAt`; `delivered` or `failed` finishes it, and its message waits
   * for its purge from then on. Ignored once the report is finished.
   */
  async recordAttempt(uid: string, attempt: CallbackAttempt): Promise<void> {
    const known = this.#inFlight.get(uid);
    if (known === undefined) return;
    this.#inFlight.delete(uid);
    const rule = (row: MessageRow | null): Decision<void> => {
      if (!pendingReport(row, uid)) return { result: undefined };
      const result = attempt.result;
      const nextAttemptAt = result === 'retry' ? (attempt.nextAttemptAt ?? attempt.now) : null;
      const callback: CallbackState = {
        state: result === 'retry' ? 'pending' : result,
        attempts: row.record.callback.attempts + 1,
        lastStatusCode: attempt.statusCode,
        lastError: attempt.error,
        nextAttemptAt,
      };
      const before = row.record.callback;
      if (attempt.failover === true && result === 'retry') {
        callback.failover = true;
        callback.restartedAfter = callback.attempts;
      } else {
        if (before.restartedAfter !== undefined) callback.restartedAfter = before.restartedAfter;
        if (before.failover === true) callback.failover = true;
      }
      const record = recordFields(row.record);
      record.callback = callback;
      // A finished part report makes way for the next part's (part-reports.ts).
      const next = result === 'retry' ? null : nextPartReport(row, record, attempt.now);
      if (next !== null) return { result: undefined, row: nextRow(row, { record, book: next.book, reportDueAt: next.reportDueAt, orderKey: next.orderKey ?? row.orderKey }) };
      // A retried report's place among those due at one time is its new due time.
      return { result: undefined, row: nextRow(row, { record, reportDueAt: nextAttemptAt, orderKey: nextAttemptAt ?? row.orderKey }) };
    };
    await this.writer.update(known.record.ref, rule, known);
  }
}

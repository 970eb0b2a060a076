/**
 * Delivery reports, as the ledger keeps them in their message's row: `record.callback` is
 * the report's state, `book.reportUid` its uid, `reportDueAt` its claim lane (a claim
 * moves it to the end of its lease) and `orderKey` its own due time (the message has left
 * the submit queue), so reports whose leases end together come back in their due order. Claims go to the store (`claimReports`); handing a
 * report back and recording an attempt are compare-and-set writes of the row.
 *
 * A report is named by its uid alone, and a store finds rows by ref: the ledger remembers
 * the ref of each report it claimed or stored leased until its attempt is recorded. Only
 * the holder of a report's lease hands it back or records its attempt, and it got the
 * report from this ledger, so the ref is known; a uid not known here is ignored, and the
 * report comes back when its lease ends.
 *
 * @module
 */
import type { CallbackAttempt, CallbackState, ClaimOptions, DueCallback } from '../storage/contract.js';
import type { MessageRow, RecordStore } from '../storage/record-store.js';
import type { Decision, RowWriter } from './compare-and-set.js';
import { copyRecord } from './copy-record.js';
import { nextRow } from './rows.js';

/** How many reports in flight are remembered at most: beyond it the oldest are forgotten. */
export const REPORTS_IN_FLIGHT_LIMIT = 100_000;

/** Whether `row` holds the pending report `uid`. */
function pendingReport(row: MessageRow | null, uid: string): row is MessageRow & { record: { callback: CallbackState } } {
  return row !== null && row.book.reportUid === uid && row.record.callback?.state === 'pending';
}

/** The reports of a ledger (see the module's TSDoc). */
export class Reports {
  /** The ref of each report leased through this ledger and not attempted yet, by uid, oldest first. */
  readonly #inFlight = new Map<string, string>();

  constructor(
    private readonly store: RecordStore,
    private readonly writer: RowWriter,
    private readonly limit = REPORTS_IN_FLIGHT_LIMIT,
  ) {}

  /** Remembers that report `uid` (of message `ref`) is leased through this ledger. */
  leased(uid: string, ref: string): void {
    this.#inFlight.delete(uid);
    this.#inFlight.set(uid, ref);
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
      this.leased(uid, row.record.ref);
      due.push({ uid, attempts: callback.attempts, message: copyRecord(row.record) });
    }
    return due;
  }

  /** Makes each of `uids` still pending claimable again at `until`, no attempt counted. */
  async defer(uids: readonly string[], until: number): Promise<void> {
    for (const uid of uids) {
      const ref = this.#inFlight.get(uid);
      if (ref === undefined) continue;
      await this.writer.update(ref, (row): Decision<void> => (pendingReport(row, uid) ? { result: undefined, row: nextRow(row, { reportDueAt: until }) } : { result: undefined }));
    }
  }

  /**
   * Records one attempt of report `uid` and ends its lease: a retry makes it due at the
   * attempt's `nextAttemptAt`; `delivered` or `failed` finishes it, and its message waits
   * for its purge from then on. Ignored once the report is finished.
   */
  async recordAttempt(uid: string, attempt: CallbackAttempt): Promise<void> {
    const ref = this.#inFlight.get(uid);
    if (ref === undefined) return;
    this.#inFlight.delete(uid);
    await this.writer.update(ref, (row): Decision<void> => {
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
      const order = nextAttemptAt === null ? {} : { orderKey: nextAttemptAt };
      return { result: undefined, row: nextRow(row, { record: { ...row.record, callback }, reportDueAt: nextAttemptAt, ...order }) };
    });
  }
}

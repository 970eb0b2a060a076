/**
 * The report log: every delivery report made, for a client to pull (`GET {base}/reports`)
 * whether or not it has a callback URL. The library decides when a report is made (a
 * message's terminal transition) and builds it from the message; a record store gives the
 * message a report key in the same atomic step as that transition and hands the ended
 * messages back in key order, keys increasing in commit order per store. A report lives as
 * long as its message (retention deletes both). Part of the storage contract (exported with
 * `Storage`).
 *
 * @module
 */
import type { MessageRecord } from './message-record.js';

/** A report of the log as the library reads it: its key, id, owner and the message it reports on. */
export interface LoggedReport {
  /** Its key in the log (the record store's `ReportedRow.seq`). */
  seq: number;
  /** The report's id: the pushed report's `uid` when the message has one, else the message's ref. */
  uid: string;
  /** Whose report it is: a principal reads only its own. */
  principalId: string;
  /** The message the report is built from. */
  message: MessageRecord;
}

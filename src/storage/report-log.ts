/**
 * The report log: every delivery report made, for a client to pull (`GET {base}/reports`)
 * whether or not it has a callback URL. The library decides when a report is made (a
 * message's terminal transition) and what it holds; a record store appends it in the same
 * atomic step as that transition and hands the log back in the order the entries were
 * made, by a key it gives each one, increasing in commit order per store. Part of the
 * storage contract (exported with `Storage`).
 *
 * @module
 */
import type { MessageRecord } from './message-record.js';

/** A report as the library makes it: what a record store appends to the log. */
export interface ReportLogEntry {
  /** The report's id: the pushed report's `uid` when the message has one, else its own, stable. */
  uid: string;
  /** Whose report it is: a principal reads only its own. */
  principalId: string;
  /** The message as it ended: the report is built from it, even once the message is purged. */
  message: MessageRecord;
}

/** An entry of the log as read back, with its place. */
export interface LoggedReport extends ReportLogEntry {
  /**
   * Its key in the log: given by the store when it appended the entry, greater than every key
   * of an entry committed before it, so a reader that saw key `k` has seen every entry below
   * `k` that will ever exist (a safe integer).
   */
  seq: number;
}

/**
 * The report the ledger logs when a message ends: its id and the message as it ended.
 *
 * @module
 */
import type { MessageRow } from '../storage/record-store.js';
import type { ReportLogEntry } from '../storage/report-log.js';
import { copyRecord } from './copy-record.js';

/**
 * The log entry of `row`, a message that has just ended. Its uid is the pushed report's when
 * the message has one (a client that gets both tells them apart by it), else the message's
 * ref: one logged report per message, so the ref names it for good.
 */
export function reportOf(row: MessageRow): ReportLogEntry {
  return { uid: row.book.reportUid ?? row.record.ref, principalId: row.record.principalId, message: copyRecord(row.record) };
}

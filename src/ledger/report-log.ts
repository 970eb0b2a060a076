/**
 * The report the log holds for an ended message: its id, owner and the message, read back
 * from the row the store keeps.
 *
 * @module
 */
import type { ReportedRow } from '../storage/record-store.js';
import type { LoggedReport } from '../storage/report-log.js';

/**
 * The report of `reported`, a message that has ended. Its uid is the pushed report's when
 * the message has one (a client that gets both tells them apart by it), else the message's
 * ref: one logged report per message, so the ref names it for good.
 */
export function reportOf({ seq, row }: ReportedRow): LoggedReport {
  return { seq, uid: row.book.reportUid ?? row.record.ref, principalId: row.record.principalId, message: row.record };
}

/**
 * The report log of a SQL record store: an ended message's `report_seq`, given by the write
 * that ends it, and a principal's read of its ended messages from a key. The key comes from
 * the one head row, incremented under its row lock, held until the writing transaction
 * commits: a later write waits for it, so keys increase in commit order, and a reader that
 * sees key `k` has seen every smaller key that will ever exist (an auto-increment key is
 * given at insert, and two transactions may commit in the other order). A write whose
 * compare-and-set does not apply leaves a gap, which a reader never notices.
 *
 * @module
 */
import { limitClause, type SqlSession } from './dialect.js';
import type { SqlContext } from './context.js';
import { fromColumns, num, ROW_COLUMNS } from './rows.js';
import type { ReportedRow } from '../record-store.js';

/** Takes the next report key on `tx` (the transaction of the write that ends the message), locking the head row until it commits. */
export async function takeReportKey(context: SqlContext, tx: SqlSession): Promise<void> {
  await context.run(`UPDATE ${context.tables.reportHead} SET seq = seq + 1 WHERE id = 1`, [], tx);
}

/** The `SET` term of the compare-and-set `UPDATE` that gives the row the key {@link takeReportKey} took. */
export function reportKeyTerm(context: SqlContext): string {
  return `report_seq = (SELECT seq FROM ${context.tables.reportHead} WHERE id = 1)`;
}

/** `RecordStore.readReports`: the principal's rows with a report key above `after`, in key order, at most `limit`. */
export async function readReports(context: SqlContext, principalId: string, after: number | null, limit: number): Promise<ReportedRow[]> {
  if (limit <= 0) return [];
  const { rows } = await context.run(
    `SELECT report_seq, ${ROW_COLUMNS} FROM ${context.tables.messages} WHERE principal_id = ? AND report_seq > ? ORDER BY report_seq ${limitClause(context.dialect)}`,
    [principalId, after ?? 0, limit],
  );
  return rows.map((row) => ({ seq: num(row.report_seq), row: fromColumns(row) }));
}

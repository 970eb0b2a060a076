/**
 * The report log of a SQL record store: an append, in the transaction of the write that ends
 * the message, and a principal's read from a key. The key comes from the one head row,
 * incremented under its row lock, held until the appending transaction commits: a later
 * append waits for it, so keys increase in commit order, and a reader that sees key `k`
 * has seen every smaller key that will ever exist (an auto-increment key is given at
 * insert, and two transactions may commit in the other order).
 *
 * @module
 */
import type { SqlSession } from './dialect.js';
import { limitClause } from './dialect.js';
import { runOn, type SqlContext } from './queue.js';
import { chunks, num, tuple } from './rows.js';
import type { LoggedReport, ReportLogEntry } from '../report-log.js';
import type { MessageRecord } from '../message-record.js';

/** Appends `report` on `tx` (the transaction of the write that ends its message). */
export async function appendReport(context: SqlContext, tx: SqlSession, report: ReportLogEntry): Promise<void> {
  const { reportHead, reportLog } = context.tables;
  await runOn(context, tx, `UPDATE ${reportHead} SET seq = seq + 1 WHERE id = 1`);
  const { rows } = await runOn(context, tx, `SELECT seq FROM ${reportHead} WHERE id = 1`);
  await runOn(context, tx, `INSERT INTO ${reportLog} (seq, principal_id, uid, message, ended_at) VALUES (?, ?, ?, ?, ?)`, [
    num(rows[0]!.seq),
    report.principalId,
    report.uid,
    JSON.stringify(report.message),
    report.message.updatedAt,
  ]);
}

/**
 * `RecordStore.purgeReports`: the log's first entries by key, read then deleted up to the
 * first whose message ended at or after `before`. Entries are appended as messages end, so
 * the oldest are first, and no index on `ended_at` is needed (one would cost every append).
 */
export async function purgeReports(context: SqlContext, before: number, limit: number): Promise<number> {
  if (limit <= 0) return 0;
  const { reportLog } = context.tables;
  const { rows } = await runOn(context, context.client, `SELECT seq, ended_at FROM ${reportLog} ORDER BY seq ${limitClause(context.dialect)}`, [limit]);
  const aged: number[] = [];
  for (const row of rows) {
    if (num(row.ended_at) >= before) break;
    aged.push(num(row.seq));
  }
  let deleted = 0;
  // In slices: a statement takes a bounded number of parameters.
  for (const slice of chunks(aged, 200)) {
    deleted += (await runOn(context, context.client, `DELETE FROM ${reportLog} WHERE seq IN ${tuple(slice.length)}`, slice)).affected;
  }
  return deleted;
}

/** The principal's entries with a key above `after`, in key order, at most `limit`. */
export async function readReports(context: SqlContext, principalId: string, after: number | null, limit: number): Promise<LoggedReport[]> {
  if (limit <= 0) return [];
  const { rows } = await runOn(
    context,
    context.client,
    `SELECT seq, principal_id, uid, message FROM ${context.tables.reportLog} WHERE principal_id = ? AND seq > ? ORDER BY seq ${limitClause(context.dialect)}`,
    [principalId, after ?? 0, limit],
  );
  return rows.map(toLogged);
}

/** An entry of the log from its columns (`seq, principal_id, uid, message`). */
export function toLogged(row: Record<string, unknown>): LoggedReport {
  return {
    seq: num(row.seq),
    principalId: String(row.principal_id),
    uid: String(row.uid),
    message: JSON.parse(typeof row.message === 'string' ? row.message : Buffer.from(row.message as Uint8Array).toString('utf8')) as MessageRecord,
  };
}

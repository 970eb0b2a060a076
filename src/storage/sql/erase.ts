/**
 * The erase primitives of a SQL record store (`RecordStore.findByRecipient`, the scan and
 * rewrite of the idempotency records; docs/erase.md), one statement for
 * every SQL database. The rows to one number are found principal by principal along the
 * list's index by principal and recipient (schema.ts, the list step), the principals
 * themselves one index seek each: no index of its own, so the write path pays nothing for
 * an erase that is rare. The scan reads by primary key, a page per call. Pulled reports are
 * the message rows themselves (report-log.ts), erased with them.
 *
 * @module
 */
import type { IdempotencyCursor } from '../erase-storage.js';
import type { IdempotencyRecord } from '../idempotency-record.js';
import type { MessageRow } from '../record-store.js';
import { limitClause } from './dialect.js';
import type { SqlContext } from './context.js';
import { IDEMPOTENCY_COLUMNS, num, ROW_COLUMNS, toIdempotency } from './rows.js';

/** The first principal id with a message from `from` on (`inclusive`) or after it; `null` when none. */
async function nextPrincipal(context: SqlContext, from: string | null, inclusive: boolean): Promise<string | null> {
  const { messages } = context.tables;
  const where = from === null ? '' : `WHERE principal_id ${inclusive ? '>=' : '>'} ?`;
  const { rows } = await context.run(`SELECT MIN(principal_id) AS p FROM ${messages} ${where}`, from === null ? [] : [from]);
  const found = rows[0]?.p;
  return found === undefined || found === null ? null : String(found);
}

/** `RecordStore.findByRecipient` over the tables of `context`. */
export async function findByRecipient(context: SqlContext, recipient: string, fromPrincipal: string | null, limit: number): Promise<MessageRow[]> {
  const { dialect, tables } = context;
  const out: MessageRow[] = [];
  const from = `FROM ${tables.messages}${dialect.forceIndex(dialect.quote(`${context.prefix}messages_list_recipient`))}`;
  const sql = `SELECT ${ROW_COLUMNS} ${from} WHERE principal_id = ? AND recipient = ? ORDER BY created_at DESC, seq DESC ${limitClause(dialect)}`;
  let principal = await nextPrincipal(context, fromPrincipal, true);
  while (principal !== null && out.length < limit) {
    out.push(...(await context.messages(sql, [principal, recipient, limit - out.length])));
    if (out.length < limit) principal = await nextPrincipal(context, principal, false);
  }
  return out;
}

/** `RecordStore.scanIdempotency`: by the table's key, principal then key. */
export async function scanIdempotency(context: SqlContext, after: IdempotencyCursor | null, limit: number): Promise<IdempotencyRecord[]> {
  if (limit <= 0) return [];
  const where = after === null ? '' : 'WHERE principal_id > ? OR (principal_id = ? AND idem_key > ?)';
  const { rows } = await context.run(
    `SELECT ${IDEMPOTENCY_COLUMNS} FROM ${context.tables.idempotency} ${where} ORDER BY principal_id, idem_key ${limitClause(context.dialect)}`,
    after === null ? [limit] : [after.principalId, after.principalId, after.key, limit],
  );
  return rows.map(toIdempotency);
}

/** `RecordStore.rewriteIdempotency`: each record's body, if its key still holds the record of that `createdAt`. */
export async function rewriteIdempotency(context: SqlContext, records: readonly IdempotencyRecord[]): Promise<number> {
  let rewritten = 0;
  for (const record of records) {
    const { affected } = await context.run(
      `UPDATE ${context.tables.idempotency} SET body = ? WHERE principal_id = ? AND idem_key = ? AND created_at = ?`,
      [record.body, record.principalId, record.key, num(record.createdAt)],
    );
    rewritten += affected;
  }
  return rewritten;
}

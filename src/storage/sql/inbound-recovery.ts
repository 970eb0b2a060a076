/**
 * The list of inbound webhook recovery on a SQL storage's inbound table
 * ({@link InboundStore.listWebhooks}): a principal's pending or failed webhooks read along
 * the index of its principal and webhook state (`(principal_id, cb_state, received_at, id)`),
 * each state's page read apart and merged, as the message list reads its states
 * (sql/list.ts).
 *
 * @module
 */
import { statesOf, type CallbackListQuery } from '../callback-list.js';
import type { InboundRow, InboundStore } from '../inbound-store.js';
import { INBOUND_COLUMNS, recordOf } from '../inbound-rows.js';
import { limitClause, type SqlClient, type SqlDialect } from './dialect.js';
import type { SqlInboundTables } from './inbound-schema.js';

/** A condition with its parameters. */
interface Condition {
  sql: string;
  params: unknown[];
}

/** The rows of `query` in tables `t`, newest arrival first (see the module's TSDoc). */
export async function webhookRows(client: SqlClient, dialect: SqlDialect, t: SqlInboundTables, query: CallbackListQuery): Promise<InboundRow[]> {
  const { inbound, id, openIndex } = t;
  const limit = Math.max(0, Math.floor(query.limit));
  const where: Condition[] = [{ sql: 'principal_id = ?', params: [query.principalId] }];
  if (query.since !== undefined) where.push({ sql: 'received_at >= ?', params: [query.since] });
  if (query.until !== undefined) where.push({ sql: 'received_at < ?', params: [query.until] });
  if (query.after !== undefined) {
    const { createdAt, seq } = query.after;
    where.push({ sql: `received_at <= ? AND (received_at < ? OR ${id} < ?)`, params: [createdAt, createdAt, seq] });
  }
  const select = (state: string): Condition => {
    // The state written out (one of two fixed words), so a partial index on the open states serves it.
    const all = [...where, { sql: `cb_state = '${state === 'failed' ? 'failed' : 'pending'}'`, params: [] }];
    return {
      sql: `SELECT ${id} AS row_id, ${INBOUND_COLUMNS} FROM ${inbound}${dialect.forceIndex(openIndex)} WHERE ${all.map((c) => c.sql).join(' AND ')}
        ORDER BY received_at DESC, ${id} DESC ${limitClause(dialect)}`,
      params: [...all.flatMap((c) => c.params), limit],
    };
  };
  const parts = statesOf(query).map(select);
  const statement: Condition =
    parts.length === 1
      ? parts[0]!
      : {
          sql: `SELECT * FROM (${parts.map((part, i) => `SELECT * FROM (${part.sql}) AS s${i}`).join(' UNION ALL ')}) AS u
            ORDER BY received_at DESC, row_id DESC ${limitClause(dialect)}`,
          params: [...parts.flatMap((part) => part.params), limit],
        };
  const { rows } = await client.run(dialect.placeholders(statement.sql), statement.params);
  return rows.map((row) => ({ record: recordOf(row), seq: Number(row.row_id) }));
}

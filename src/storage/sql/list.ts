/**
 * The message list of a SQL record store (`RecordStore.listMessages`), one statement for
 * every SQL database: a principal's rows newest first from the page's start, read along the
 * index of its most selective filter (schema.ts, the list step), the other filters checked
 * on the rows that index gives. A filter of several states reads each state's index apart,
 * a page at most from each, and merges them: one index walk in order per state, rather
 * than every row of the states sorted.
 *
 * @module
 */
import type { MessageListQuery } from '../message-list.js';
import type { MessageRow } from '../record-store.js';
import { limitClause } from './dialect.js';
import { runOn, type SqlContext } from './queue.js';
import { fromColumns, ROW_COLUMNS } from './rows.js';

/** The index a list reads along, named without the prefix, for a dialect that must be told. */
type ListIndexName = 'messages_list' | 'messages_list_state' | 'messages_list_recipient' | 'messages_list_profile' | 'messages_external';

/** A condition with its parameters. */
interface Condition {
  sql: string;
  params: unknown[];
}

/** The conditions of `query` other than its states, and the index its most selective one is served by. */
function conditions(query: MessageListQuery): { where: Condition[]; index: ListIndexName } {
  const where: Condition[] = [{ sql: 'principal_id = ?', params: [query.principalId] }];
  let index: ListIndexName = 'messages_list';
  const states = query.states ?? [];
  if (query.profileCode !== undefined) {
    where.push({ sql: 'profile_code = ?', params: [query.profileCode] });
    index = 'messages_list_profile';
  }
  if (states.length > 0) index = 'messages_list_state';
  if (query.recipient !== undefined) {
    where.push({ sql: 'recipient = ?', params: [query.recipient] });
    index = 'messages_list_recipient';
  }
  if (query.externalId !== undefined) {
    where.push({ sql: 'external_id = ?', params: [query.externalId] });
    index = 'messages_external';
  }
  if (query.since !== undefined) where.push({ sql: 'created_at >= ?', params: [query.since] });
  if (query.until !== undefined) where.push({ sql: 'created_at < ?', params: [query.until] });
  if (query.after !== undefined) {
    // The bound first, so the index range starts at the cursor; the tie on `seq` after it.
    const { createdAt, seq } = query.after;
    where.push({ sql: 'created_at <= ? AND (created_at < ? OR seq < ?)', params: [createdAt, createdAt, seq] });
  }
  return { where, index };
}

/** `RecordStore.listMessages` over the tables of `context` (prefix `prefix`). */
export async function listMessages(context: SqlContext, prefix: string, query: MessageListQuery): Promise<MessageRow[]> {
  const limit = Math.floor(query.limit);
  if (limit <= 0) return [];
  const { dialect, tables } = context;
  const { where, index } = conditions(query);
  const states = [...new Set(query.states ?? [])];
  const order = `ORDER BY created_at DESC, seq DESC ${limitClause(dialect)}`;
  const from = `FROM ${tables.messages}${dialect.forceIndex(dialect.quote(`${prefix}${index}`))}`;
  const select = (extra: Condition[]): Condition => {
    const all = [...where, ...extra];
    return { sql: `SELECT ${ROW_COLUMNS} ${from} WHERE ${all.map((c) => c.sql).join(' AND ')} ${order}`, params: [...all.flatMap((c) => c.params), limit] };
  };
  let statement: Condition;
  if (states.length <= 1) statement = select(states.length === 0 ? [] : [{ sql: 'state = ?', params: [states[0]] }]);
  else {
    // Each state's page in its own subquery (a derived table: every database orders and
    // limits it alone), then the newest of them.
    const parts = states.map((state) => select([{ sql: 'state = ?', params: [state] }]));
    statement = {
      sql: `SELECT ${ROW_COLUMNS} FROM (${parts.map((part, i) => `SELECT * FROM (${part.sql}) AS s${i}`).join(' UNION ALL ')}) AS u ${order}`,
      params: [...parts.flatMap((part) => part.params), limit],
    };
  }
  const { rows } = await runOn(context, context.client, statement.sql, statement.params);
  return rows.map(fromColumns);
}

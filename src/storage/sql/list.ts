/**
 * The message list of a SQL record store (`RecordStore.listMessages`), one statement for
 * every SQL database: a principal's rows newest first from the page's start, read along the
 * index of its most selective filter (schema.ts, the list step), the other filters checked
 * on the rows that index gives. A filter of several states reads each state's index apart,
 * a page at most from each, and merges them: one index walk in order per state, rather
 * than every row of the states sorted. Report recovery's list (`listCallbacks`) reads the
 * same way along the index of its report states.
 *
 * @module
 */
import { statesOf, type CallbackListQuery } from '../callback-list.js';
import type { ListPosition, MessageListQuery } from '../message-list.js';
import type { MessageRow } from '../record-store.js';
import { limitClause } from './dialect.js';
import type { SqlContext } from './context.js';
import { ROW_COLUMNS } from './rows.js';

/** The index a list reads along, named without the prefix, for a dialect that must be told. */
type ListIndexName = 'messages_list' | 'messages_list_state' | 'messages_list_recipient' | 'messages_list_profile' | 'messages_external' | 'messages_callbacks';

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
  where.push(...timeConditions(query));
  return { where, index };
}

/** The conditions of a page's times and start: `since`, `until` and the cursor. */
function timeConditions(query: { since?: number; until?: number; after?: ListPosition }): Condition[] {
  const where: Condition[] = [];
  if (query.since !== undefined) where.push({ sql: 'created_at >= ?', params: [query.since] });
  if (query.until !== undefined) where.push({ sql: 'created_at < ?', params: [query.until] });
  if (query.after !== undefined) {
    // The bound first, so the index range starts at the cursor; the tie on `seq` after it.
    const { createdAt, seq } = query.after;
    where.push({ sql: 'created_at <= ? AND (created_at < ? OR seq < ?)', params: [createdAt, createdAt, seq] });
  }
  return where;
}

/** `RecordStore.listMessages` over the tables of `context`. */
export function listMessages(context: SqlContext, query: MessageListQuery): Promise<MessageRow[]> {
  const { where, index } = conditions(query);
  return listAlong(context, { where, index, stateColumn: 'state', states: [...new Set(query.states ?? [])], limit: query.limit });
}

/** `RecordStore.listCallbacks` over the tables of `context`: each report state's index walked apart, and merged. */
export function listCallbacks(context: SqlContext, query: CallbackListQuery): Promise<MessageRow[]> {
  const where = [{ sql: 'principal_id = ?', params: [query.principalId] }, ...timeConditions(query)];
  return listAlong(context, { where, index: 'messages_callbacks', stateColumn: 'callback_state', states: statesOf(query), limit: query.limit });
}

/** What a list reads: its conditions, the index along which, and the states (of `stateColumn`) it reads apart. */
interface ListPlan {
  where: Condition[];
  index: ListIndexName;
  stateColumn: 'state' | 'callback_state';
  states: readonly string[];
  limit: number;
}

/** The rows of `plan`, newest first, at most its `limit`. */
async function listAlong(context: SqlContext, plan: ListPlan): Promise<MessageRow[]> {
  const limit = Math.floor(plan.limit);
  if (limit <= 0) return [];
  const { dialect, tables } = context;
  const { where, index, states, stateColumn } = plan;
  const order = `ORDER BY created_at DESC, seq DESC ${limitClause(dialect)}`;
  const from = `FROM ${tables.messages}${dialect.forceIndex(dialect.quote(`${context.prefix}${index}`))}`;
  const select = (extra: Condition[]): Condition => {
    const all = [...where, ...extra];
    return { sql: `SELECT ${ROW_COLUMNS} ${from} WHERE ${all.map((c) => c.sql).join(' AND ')} ${order}`, params: [...all.flatMap((c) => c.params), limit] };
  };
  let statement: Condition;
  if (states.length <= 1) statement = select(states.length === 0 ? [] : [{ sql: `${stateColumn} = ?`, params: [states[0]] }]);
  else {
    // Each state's page in its own subquery (a derived table: every database orders and
    // limits it alone), then the newest of them.
    const parts = states.map((state) => select([{ sql: `${stateColumn} = ?`, params: [state] }]));
    statement = {
      sql: `SELECT ${ROW_COLUMNS} FROM (${parts.map((part, i) => `SELECT * FROM (${part.sql}) AS s${i}`).join(' UNION ALL ')}) AS u ${order}`,
      params: [...parts.flatMap((part) => part.params), limit],
    };
  }
  return context.messages(statement.sql, statement.params);
}

/**
 * The reads and claims of the queues of a SQL record store: submit claims, delivery-report
 * claims, the sweeps' due rows, the ends of a class and the queue counts. A claim selects
 * its rows with a lock that skips the rows another claim holds (`FOR UPDATE SKIP LOCKED`)
 * and leases them in the same transaction, so two claims at once take disjoint sets and
 * neither comes back short while free rows remain.
 *
 * @module
 */
import type { ClaimOptions } from '../claim-options.js';
import type { QueueCount } from '../contract.js';
import type { MessageRow, Timer } from '../record-store.js';
import { limitClause, type SqlSession } from './dialect.js';
import type { SqlContext } from './context.js';
import { fromColumns, numOrNull, num, ROW_COLUMNS, tuple } from './rows.js';

/** The condition of a row a submit claim at `?` (three times: due, lease, validity) may take. */
const CLAIMABLE = 'due_at <= ? AND (lease_until IS NULL OR lease_until <= ?) AND (valid_until IS NULL OR valid_until > ?)';

/**
 * Selects with `select` (ending in `LIMIT ?` and the skip-locked lock) and applies `set` to
 * the selected rows, in one transaction; returns the rows as `change` makes them, which is
 * how `set` stores them.
 */
async function claimRows(
  context: SqlContext,
  select: { sql: string; params: unknown[] },
  set: { sql: string; params: unknown[] },
  change: (row: MessageRow) => MessageRow,
): Promise<MessageRow[]> {
  const { messages } = context.tables;
  return context.client.transaction(async (tx) => {
    const { rows } = await context.run(`${select.sql} ${context.dialect.lockSkipLocked}`, select.params, tx);
    if (rows.length === 0) return [];
    const claimed = rows.map(fromColumns);
    const seqs = claimed.map((row) => row.seq);
    await context.run(`UPDATE ${messages} SET ${set.sql}, version = version + 1 WHERE seq IN ${tuple(seqs.length)}`, [...set.params, ...seqs], tx);
    return claimed.map((row) => ({ ...change(row), version: row.version + 1 }));
  });
}

/** `RecordStore.claimMessages`. */
export function claimMessages(context: SqlContext, { owner, limit, leaseMs, now }: ClaimOptions): Promise<MessageRow[]> {
  if (limit <= 0) return Promise.resolve([]);
  const until = now + leaseMs;
  return claimRows(
    context,
    {
      sql: `SELECT ${ROW_COLUMNS} FROM ${context.tables.messages}${context.dialect.forceIndex(context.tables.claimIndex)} WHERE queue IS NOT NULL AND ${CLAIMABLE} ORDER BY queue, order_key, seq ${limitClause(context.dialect)}`,
      params: [now, now, now, limit],
    },
    { sql: 'lease_owner = ?, lease_until = ?', params: [owner, until] },
    (row) => ({ ...row, leaseOwner: owner, leaseUntil: until }),
  );
}

/** `RecordStore.claimReports`. */
export function claimReports(context: SqlContext, { limit, leaseMs, now }: ClaimOptions): Promise<MessageRow[]> {
  if (limit <= 0) return Promise.resolve([]);
  const until = now + leaseMs;
  return claimRows(
    context,
    {
      sql: `SELECT ${ROW_COLUMNS} FROM ${context.tables.messages}${context.dialect.forceIndex(context.tables.reportIndex)} WHERE report_due_at <= ? ORDER BY report_due_at, order_key, seq ${limitClause(context.dialect)}`,
      params: [now, limit],
    },
    { sql: 'report_due_at = ?', params: [until] },
    (row) => ({ ...row, reportDueAt: until }),
  );
}

/** `RecordStore.dueMessages`, on `session` (the pool unless a transaction's is given). */
export async function dueMessages(context: SqlContext, timer: Timer, at: number, limit: number, session?: SqlSession): Promise<MessageRow[]> {
  if (limit <= 0) return [];
  const sql = `SELECT ${ROW_COLUMNS} FROM ${context.tables.messages} WHERE timer = ? AND timer_at <= ? ORDER BY timer_at, seq ${limitClause(context.dialect)}`;
  return context.messages(sql, [timer, at, limit], session);
}

/** `RecordStore.queueEnds`, in one round trip. */
export async function queueEnds(
  context: SqlContext,
  queue: number,
  principalId: string,
  now: number,
): Promise<{ principalLast: number | null; head: number | null }> {
  const m = context.tables.messages;
  if (context.dialect.partialIndexes === true) {
    // The first free row and the earliest claimable row of a lapsed lease, each from its own
    // partial index (schema.ts): no walk past the rows a worker holds.
    const { rows } = await context.run(
      `SELECT
        (SELECT MAX(order_key) FROM ${m} WHERE queue = ? AND principal_id = ?) AS principal_last,
        (SELECT order_key FROM ${m} WHERE queue = ? AND lease_until IS NULL AND due_at <= ? AND (valid_until IS NULL OR valid_until > ?)
          ORDER BY order_key, seq LIMIT 1) AS free,
        (SELECT MIN(order_key) FROM ${m} WHERE queue = ? AND lease_until <= ? AND due_at <= ? AND (valid_until IS NULL OR valid_until > ?)) AS lapsed,
        (SELECT MAX(order_key) FROM ${m} WHERE queue = ?) AS last`,
      [queue, principalId, queue, now, now, queue, now, now, now, queue],
    );
    const row = rows[0] ?? {};
    const free = numOrNull(row.free);
    const lapsed = numOrNull(row.lapsed);
    const head = free === null ? lapsed : lapsed === null ? free : Math.min(free, lapsed);
    return { principalLast: numOrNull(row.principal_last), head: head ?? numOrNull(row.last) };
  }
  const { rows } = await context.run(
    `SELECT
      (SELECT MAX(order_key) FROM ${m} WHERE queue = ? AND principal_id = ?) AS principal_last,
      (SELECT order_key FROM ${m}${context.dialect.forceIndex(context.tables.claimIndex)} WHERE queue = ? AND ${CLAIMABLE} ORDER BY order_key, seq LIMIT 1) AS head,
      (SELECT MAX(order_key) FROM ${m} WHERE queue = ?) AS last`,
    [queue, principalId, queue, now, now, now, queue],
  );
  const row = rows[0] ?? {};
  return { principalLast: numOrNull(row.principal_last), head: numOrNull(row.head) ?? numOrNull(row.last) };
}

/** `RecordStore.countQueued`: each count and minimum on an index of its own, in one round trip. */
export async function countQueued(context: SqlContext, principalId?: string): Promise<QueueCount> {
  const m = context.tables.messages;
  const scope = principalId === undefined ? '' : ' AND principal_id = ?';
  const scoped = (queue: number) => (principalId === undefined ? [queue] : [queue, principalId]);
  const { rows } = await context.run(
    `SELECT
      (SELECT COUNT(*) FROM ${m} WHERE queue = ?${scope}) AS transactional,
      (SELECT COUNT(*) FROM ${m} WHERE queue = ?${scope}) AS bulk,
      (SELECT MIN(accepted_at) FROM ${m} WHERE queue = ?${scope}) AS oldest0,
      (SELECT MIN(accepted_at) FROM ${m} WHERE queue = ?${scope}) AS oldest1`,
    [...scoped(0), ...scoped(1), ...scoped(0), ...scoped(1)],
  );
  const row = rows[0] ?? {};
  const oldest = [numOrNull(row.oldest0), numOrNull(row.oldest1)].filter((at): at is number => at !== null);
  return {
    transactional: num(row.transactional ?? 0),
    bulk: num(row.bulk ?? 0),
    oldestAcceptedAt: oldest.length === 0 ? null : Math.min(...oldest),
  };
}

/**
 * The guard of an insert and the credit of a SQL record store: the idempotency record put
 * unless a live one holds the key, the credit taken unless the balance is smaller, and each
 * counter added to unless it would pass its limit, each inside the transaction that stores
 * the messages. The counter's row is locked by its update, so two inserts adding to one
 * counter wait on each other and the second sees the first's units. The idempotency put comes first, so two
 * inserts under one key wait on each other's row lock and the second sees the first's
 * record: one of them is stored.
 *
 * @module
 */
import type { CounterGuard, InsertGuard, InsertRefusal } from '../record-store.js';
import { limitClause, type SqlSession } from './dialect.js';
import type { SqlContext } from './context.js';
import { IDEMPOTENCY_COLUMNS, idempotencyValues, num, tuple } from './rows.js';

/** Thrown inside a transaction to roll it back when a guard refuses; caught by the insert. */
export class GuardRefusal extends Error {
  /** Why nothing was stored. */
  readonly refusal: InsertRefusal;

  /** A refusal for `refusal`. */
  constructor(refusal: InsertRefusal) {
    super(refusal.refused);
    this.refusal = refusal;
  }
}

/**
 * Applies `guard` in transaction `tx`; throws a {@link GuardRefusal} when it refuses.
 * Resolves with the counters' new values when it has counters.
 */
export async function applyGuard(context: SqlContext, tx: SqlSession, guard: InsertGuard): Promise<number[] | undefined> {
  const { idempotency, credit } = context.tables;
  const record = guard.idempotency;
  if (record !== undefined) {
    const insert = context.dialect.insertIgnore(idempotency, IDEMPOTENCY_COLUMNS, tuple(7));
    const inserted = await context.run(insert, idempotencyValues(record), tx);
    if (inserted.affected === 0) {
      // The key is stored: it is free again only if that record has expired.
      const replaced = await context.run(
        `UPDATE ${idempotency} SET body_hash = ?, status = ?, body = ?, created_at = ?, expires_at = ?
          WHERE principal_id = ? AND idem_key = ? AND expires_at <= ?`,
        [record.bodyHash, record.status, record.body, record.createdAt, record.expiresAt, record.principalId, record.key, record.createdAt],
        tx,
      );
      if (replaced.affected === 0) throw new GuardRefusal({ refused: 'key-taken' });
    }
  }
  if (guard.credit !== undefined && guard.credit.units > 0) {
    const { principalId, units } = guard.credit;
    const take = `UPDATE ${credit} SET balance = balance - ? WHERE principal_id = ? AND balance >= ?`;
    const taken = await context.run(take, [units, principalId, units], tx);
    if (taken.affected === 0) throw new GuardRefusal({ refused: 'insufficient-credit', balance: await balanceOf(context, tx, principalId) });
  }
  if (guard.counters === undefined) return undefined;
  const counted: number[] = [];
  for (let i = 0; i < guard.counters.length; i++) counted.push(await addToCounter(context, tx, guard.counters[i]!, i));
  return counted;
}

/** Adds `counter`'s units unless it would pass its limit (a refusal naming index `index`); resolves with the new value. */
async function addToCounter(context: SqlContext, tx: SqlSession, counter: CounterGuard, index: number): Promise<number> {
  const { counters } = context.tables;
  const { principalId, period, units, limit } = counter;
  // Created, or locked, by a write first: two inserts that both read it before writing it
  // would each wait for the other's lock (a deadlock, on MySQL).
  await context.run(context.dialect.upsertAdd(counters, 'principal_id, period', 'units'), [principalId, period, 0], tx);
  const added = await context.run(
    `UPDATE ${counters} SET units = units + ? WHERE principal_id = ? AND period = ? AND units + ? <= ?`,
    [units, principalId, period, units, limit],
    tx,
  );
  if (added.affected === 0) throw new GuardRefusal({ refused: 'limit-reached', counter: index });
  return countedOf(context, tx, principalId, period);
}

/** The principal's counter `period` on `session`, 0 when it has none. */
export async function countedOf(context: SqlContext, session: SqlSession, principalId: string, period: string): Promise<number> {
  const { rows } = await context.run(`SELECT units FROM ${context.tables.counters} WHERE principal_id = ? AND period = ?`, [principalId, period], session);
  return rows.length === 0 ? 0 : num(rows[0]!.units);
}

/**
 * `RecordStore.purgeCounters`: up to `limit` counters of ended periods (none of `live`), read
 * then deleted by key. The table holds a few rows per principal: no index on the period.
 */
export async function purgeCounters(context: SqlContext, live: readonly string[], limit: number): Promise<number> {
  if (limit <= 0) return 0;
  const { counters } = context.tables;
  const notLive = live.length === 0 ? '' : `WHERE period NOT IN ${tuple(live.length)}`;
  const { rows } = await context.run(`SELECT principal_id, period FROM ${counters} ${notLive} ${limitClause(context.dialect)}`, [...live, limit]);
  return context.deleteByKey(counters, ['principal_id', 'period'], rows);
}

/** Adds `units` to the principal's balance (created at 0) on `session`. */
export async function addUnits(context: SqlContext, session: SqlSession, principalId: string, units: number): Promise<void> {
  await context.run(context.dialect.upsertAdd(context.tables.credit, 'principal_id', 'balance'), [principalId, units], session);
}

/** The principal's balance on `session`, 0 when it has none. */
export async function balanceOf(context: SqlContext, session: SqlSession, principalId: string): Promise<number> {
  const { rows } = await context.run(`SELECT balance FROM ${context.tables.credit} WHERE principal_id = ?`, [principalId], session);
  return rows.length === 0 ? 0 : num(rows[0]!.balance);
}

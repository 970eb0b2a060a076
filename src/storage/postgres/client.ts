/**
 * The shared SQL record store's `SqlClient` on the host's `pg.Pool`: statements on the pool,
 * transactions on one client at READ COMMITTED (where a compare-and-set `UPDATE` re-reads a
 * row another transaction changed before deciding), tried again after a deadlock, and the
 * schema's changes under a transaction-scoped advisory lock.
 *
 * @module
 */
import type { Pool } from 'pg';
import { retryingDeadlocks, transactionOn, type SqlClient, type SqlResult, type SqlSession } from '../sql/dialect.js';

/** First key of the two-key advisory lock of a schema's changes: "SMSO" in ASCII (the earlier adapter's, so the two never migrate at once). */
const LOCK_NAMESPACE = 0x534d534f;

/**
 * First key of the two-key advisory lock of {@link SqlClient.lockedTransaction}, the second
 * `hashtext(key)`: "SMMO" in ASCII, the lock the earlier adapter stored a long MO message's
 * parts under, so that instances of both versions store one message's parts in turn.
 */
const KEY_LOCK_NAMESPACE = 0x534d4d4f;

/** FNV-1a of `name` as a signed 32-bit int: the advisory lock's second key. */
export function lockKey(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

/** SQLSTATE 40P01: the server rolled the transaction back to break a deadlock; running it again is safe. */
export function isDeadlock(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '40P01';
}

/** A session on `target` (the pool, or one client). */
function sessionOf(target: Pick<Pool, 'query'>): SqlSession {
  return {
    async run(sql, params = []): Promise<SqlResult> {
      const result = await target.query(sql, params as unknown[]);
      return { rows: result.rows as Record<string, unknown>[], affected: result.rowCount ?? 0 };
    },
  };
}

/**
 * Runs `work` in a transaction on a client of `pool`. A client that errors while checked out
 * (its connection died) or cannot roll back is dropped by the pool, not reused.
 */
async function inTransaction<T>(pool: Pool, work: (tx: SqlSession) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // Without a listener, a connection dying while checked out would crash the process.
  const onError = (error: Error): void => {
    broken = error;
  };
  client.on('error', onError);
  try {
    return await transactionOn(sessionOf(client), ['BEGIN'], work, (error) => {
      broken = error instanceof Error ? error : new Error(String(error));
    });
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/**
 * The `SqlClient` of `pool`; `schema` (unquoted) is created by `exclusive` and names its
 * lock. `ready` is awaited before every statement and transaction (not `exclusive`, which
 * makes the schema): a host may call a step before `ready()`.
 */
export function postgresClient(pool: Pool, schema: string, ready: () => Promise<void>): SqlClient {
  const direct = sessionOf(pool);
  return {
    async run(sql, params) {
      await ready();
      return direct.run(sql, params);
    },
    async transaction(work) {
      await ready();
      return retryingDeadlocks(isDeadlock, () => inTransaction(pool, work));
    },
    async lockedTransaction(key, work) {
      await ready();
      // Taken first: the snapshot of each later statement is taken once it is held.
      return inTransaction(pool, async (tx) => {
        await tx.run('SELECT pg_advisory_xact_lock($1::int4, hashtext($2))', [KEY_LOCK_NAMESPACE, key]);
        return work(tx);
      });
    },
    // One transaction under the schema's lock: a change made by `work` is all there or not at all.
    exclusive(_name, work) {
      return inTransaction(pool, async (tx) => {
        await tx.run('SELECT pg_advisory_xact_lock($1::int4, $2::int4)', [LOCK_NAMESPACE, lockKey(schema)]);
        await tx.run(`CREATE SCHEMA IF NOT EXISTS "${schema.replaceAll('"', '""')}"`);
        return work(tx);
      });
    },
  };
}

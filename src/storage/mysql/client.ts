/**
 * The shared SQL record store's `SqlClient` on a `mysql2/promise` pool: statements with the
 * driver's own escaping (`query`, so lists of any length make no prepared statements), and
 * transactions at READ COMMITTED, where a claim's locking read locks only the rows it takes
 * and no gaps (inserts go on while a claim runs), tried again after a deadlock.
 *
 * @module
 */
import type { Pool, PoolConnection } from 'mysql2/promise';
import { retryingDeadlocks, transactionOn, type SqlClient, type SqlResult, type SqlSession } from '../sql/dialect.js';

/** ER_LOCK_DEADLOCK: the server rolled the transaction back to break a deadlock; running it again is safe. */
function isDeadlock(error: unknown): boolean {
  return (error as { errno?: unknown } | null)?.errno === 1213;
}

/** What `pool.query` or `connection.query` gives, as an {@link SqlResult}. */
function toResult(result: unknown): SqlResult {
  if (Array.isArray(result)) return { rows: result as Record<string, unknown>[], affected: 0 };
  return { rows: [], affected: Number((result as { affectedRows?: unknown }).affectedRows ?? 0) };
}

/** A session on `target` (the pool, or one connection). */
function sessionOf(target: Pool | PoolConnection): SqlSession {
  return {
    async run(sql, params = []) {
      const [result] = await target.query({ sql, values: params as unknown[], rowsAsArray: false, nestTables: false });
      return toResult(result);
    },
  };
}

/** Runs `work` on a connection of `pool`; a connection left in an unknown state is closed, not given back. */
async function onConnection<T>(pool: Pool, work: (connection: PoolConnection, broken: () => void) => Promise<T>): Promise<T> {
  const connection = await pool.getConnection();
  let healthy = true;
  try {
    return await work(connection, () => {
      healthy = false;
    });
  } finally {
    if (healthy) connection.release();
    else connection.destroy();
  }
}

/** Runs `work` in a READ COMMITTED transaction on `connection`. */
function inTransaction<T>(connection: PoolConnection, broken: () => void, work: (tx: SqlSession) => Promise<T>): Promise<T> {
  return transactionOn(sessionOf(connection), ['SET TRANSACTION ISOLATION LEVEL READ COMMITTED', 'START TRANSACTION'], work, broken);
}

/**
 * Runs `work` on a connection of `pool` holding the server's named lock `lockName` (an SQL
 * expression of one `?`, `name`), released after it; throws when it is not had within 60 s.
 */
function holdingLock<T>(pool: Pool, lockName: string, name: string, work: (connection: PoolConnection, broken: () => void) => Promise<T>): Promise<T> {
  return onConnection(pool, async (connection, broken) => {
    const session = sessionOf(connection);
    const { rows } = await session.run(`SELECT GET_LOCK(${lockName}, 60) AS locked`, [name]);
    if (Number(rows[0]?.locked) !== 1) throw new Error(`MysqlRecordStore: could not take the lock ${name} within 60 s`);
    try {
      return await work(connection, broken);
    } finally {
      await session.run(`SELECT RELEASE_LOCK(${lockName})`, [name]).catch(broken);
    }
  });
}

// A named lock is server-wide: the database's name keeps two databases' locks apart.
/** The schema lock's name: at most 64 characters. */
const SCHEMA_LOCK = "LEFT(CONCAT(DATABASE(), '.', ?), 64)";
/** A key lock's name: a digest, as keys may be longer than a lock name may be. */
const KEY_LOCK = "CONCAT('sms-outbox:', SHA1(CONCAT(DATABASE(), '.', ?)))";

/** The `SqlClient` of `pool`. */
export function mysqlClient(pool: Pool): SqlClient {
  const direct = sessionOf(pool);
  return {
    run: direct.run,
    transaction(work) {
      return retryingDeadlocks(isDeadlock, () => onConnection(pool, (connection, broken) => inTransaction(connection, broken, work)));
    },
    // The lock is the session's, not the transaction's: it is taken before the transaction starts and released after it ends.
    lockedTransaction(key, work) {
      return holdingLock(pool, KEY_LOCK, key, (connection, broken) => retryingDeadlocks(isDeadlock, () => inTransaction(connection, broken, work)));
    },
    exclusive(name, work) {
      return holdingLock(pool, SCHEMA_LOCK, name, (connection) => work(sessionOf(connection)));
    },
  };
}

/**
 * The shared SQL record store's `SqlClient` on a `mysql2/promise` pool: statements with the
 * driver's own escaping (`query`, so lists of any length make no prepared statements), and
 * transactions at READ COMMITTED, where a claim's locking read locks only the rows it takes
 * and no gaps (inserts go on while a claim runs), tried again after a deadlock.
 *
 * @module
 */
import type { Pool, PoolConnection } from 'mysql2/promise';
import type { SqlClient, SqlResult, SqlSession } from '../sql/dialect.js';

/** How many times a transaction is run when the server ends it as a deadlock's victim. */
const DEADLOCK_ATTEMPTS = 5;

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

/** The `SqlClient` of `pool`. */
export function mysqlClient(pool: Pool): SqlClient {
  const direct = sessionOf(pool);
  return {
    run: direct.run,
    async transaction(work) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await onConnection(pool, async (connection, broken) => {
            const tx = sessionOf(connection);
            try {
              await tx.run('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
              await tx.run('START TRANSACTION');
              const result = await work(tx);
              await tx.run('COMMIT');
              return result;
            } catch (error) {
              await tx.run('ROLLBACK').catch(broken);
              throw error;
            }
          });
        } catch (error) {
          if (!isDeadlock(error) || attempt >= DEADLOCK_ATTEMPTS) throw error;
        }
      }
    },
    exclusive(name, work) {
      return onConnection(pool, async (connection, broken) => {
        const session = sessionOf(connection);
        // A named lock is server-wide: the database's name keeps two databases' locks apart.
        const lockName = 'LEFT(CONCAT(DATABASE(), \'.\', ?), 64)';
        const { rows } = await session.run(`SELECT GET_LOCK(${lockName}, 60) AS locked`, [name]);
        if (Number(rows[0]?.locked) !== 1) throw new Error(`MysqlRecordStore: could not take the lock ${name} within 60 s`);
        try {
          return await work(session);
        } finally {
          await session.run(`SELECT RELEASE_LOCK(${lockName})`, [name]).catch(broken);
        }
      });
    },
  };
}

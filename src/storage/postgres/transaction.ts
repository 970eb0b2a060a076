/**
 * One transaction on a client of the PostgreSQL storage's pool, for the steps that take more
 * than one statement: migrations, and inserts that charge credit or store scheduled sends.
 *
 * @module
 */
import type { Pool, PoolClient } from 'pg';

/** Runs `work` in a transaction on one client of `pool`; rolls back if it throws. */
export async function transaction<T>(pool: Pool, work: (db: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A connection that dies while checked out emits 'error' on the client, and the pool
  // listens only to idle ones: without this listener the process would crash. The query
  // in flight rejects on its own; the client is then dropped, not reused.
  const onError = (error: Error): void => {
    broken = error;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      // A client that cannot roll back is in an unknown state: the pool must drop it.
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    }
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/**
 * The PostgreSQL service of the e2e tests: a pool on the test database, whether it is
 * reachable, and fresh schemas that are dropped afterwards. A test that needs it skips
 * with a printed reason when it is unreachable, unless SMS_OUTBOX_REQUIRE_SERVICES=1.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll } from 'vitest';
import { makePool, postgresUnavailable as unavailable } from '../helpers/services.js';
import { eventually } from '../helpers/poll.js';
import { hostApplicationName } from './host-process.js';

export { makePool };

/**
 * Why PostgreSQL cannot be used, or `null` when it can. Prints the reason with
 * console.warn for `what`; throws instead when SMS_OUTBOX_REQUIRE_SERVICES=1.
 */
export async function postgresUnavailable(what: string): Promise<string | null> {
  const pool = makePool(1);
  try {
    const reason = await unavailable(pool);
    if (reason !== null) console.warn(`${what} skipped: ${reason}`);
    return reason;
  } finally {
    await pool.end().catch(() => undefined);
  }
}

/** A schema name no other test uses. */
export function freshSchema(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/**
 * Fresh schema names for one test file (see {@link freshSchema}), every one of them dropped
 * when the file's tests are done; nothing is dropped when PostgreSQL was `unavailable`.
 */
export function schemasOfThisFile(unavailable: string | null): (prefix: string) => string {
  const schemas: string[] = [];
  afterAll(async () => {
    if (unavailable !== null || schemas.length === 0) return;
    const pool = makePool(1);
    for (const schema of schemas) await dropSchema(pool, schema);
    await pool.end();
  });
  return (prefix) => {
    const schema = freshSchema(prefix);
    schemas.push(schema);
    return schema;
  };
}

/** Drops `schema` and everything in it. */
export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/**
 * Waits until PostgreSQL has finished every statement a killed host (by instance id) had
 * sent: the server runs, and commits, a statement whose client died while it ran.
 */
export async function hostStatementsSettled(instanceId: string): Promise<void> {
  const pool = makePool(1);
  const open = async (): Promise<number> => {
    const sql = 'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1';
    const { rows } = await pool.query<{ n: number }>(sql, [hostApplicationName(instanceId)]);
    return rows[0]!.n;
  };
  try {
    await eventually(async () => (await open()) === 0, { timeoutMs: 15_000 });
  } finally {
    await pool.end();
  }
}

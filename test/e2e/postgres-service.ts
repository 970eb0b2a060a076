/**
 * The PostgreSQL service of the e2e tests: a pool on the test database, whether it is
 * reachable, and fresh schemas that are dropped afterwards. A test that needs it skips
 * with a printed reason when it is unreachable, unless SMS_OUTBOX_REQUIRE_SERVICES=1.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** A pool on the test database (127.0.0.1:5432, user postgres, database test, or PG* env). */
export function makePool(max = 4): pg.Pool {
  return new pg.Pool({
    host: process.env.PGHOST ?? '127.0.0.1',
    port: Number(process.env.PGPORT ?? 5432),
    user: process.env.PGUSER ?? 'postgres',
    password: process.env.PGPASSWORD,
    database: process.env.PGDATABASE ?? 'test',
    connectionTimeoutMillis: 5_000,
    max,
  });
}

/**
 * Why PostgreSQL cannot be used, or `null` when it can. Prints the reason with
 * console.warn for `what`; throws instead when SMS_OUTBOX_REQUIRE_SERVICES=1.
 */
export async function postgresUnavailable(what: string): Promise<string | null> {
  const pool = makePool(1);
  const reason = await pool.query('SELECT 1').then(
    () => null,
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
  await pool.end().catch(() => undefined);
  if (reason === null) return null;
  if (process.env.SMS_OUTBOX_REQUIRE_SERVICES === '1') {
    throw new Error(`${what}: PostgreSQL is required (SMS_OUTBOX_REQUIRE_SERVICES=1) but unreachable: ${reason}`);
  }
  console.warn(`${what} skipped: PostgreSQL unreachable (${reason})`);
  return reason;
}

/** A schema name no other test uses. */
export function freshSchema(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** Drops `schema` and everything in it. */
export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/**
 * Reaching the real services the adapter tests use. A test file asks once; when the
 * service is unreachable the file skips with a printed reason, except in CI
 * (`SMS_OUTBOX_REQUIRE_SERVICES=1`, set by `.ci/run`), where that is a failure.
 */
import { randomBytes } from 'node:crypto';
import { createConnection } from 'node:net';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { createClient } from 'redis';

/** Connection settings of the test PostgreSQL (PG* environment variables override). */
export function postgresConfig(max = 10): pg.PoolConfig {
  return {
    host: process.env.PGHOST ?? '127.0.0.1',
    port: Number(process.env.PGPORT ?? 5432),
    user: process.env.PGUSER ?? 'postgres',
    password: process.env.PGPASSWORD,
    database: process.env.PGDATABASE ?? 'test',
    connectionTimeoutMillis: 5_000,
    max,
  };
}

/** A pool on the test database; its connections carry `applicationName` in `pg_stat_activity`, if given. */
export function makePool(max = 10, applicationName?: string): pg.Pool {
  return new pg.Pool({ ...postgresConfig(max), ...(applicationName === undefined ? {} : { application_name: applicationName }) });
}

/** Connection settings of the test MariaDB (MYSQL_* environment variables override). */
export const MYSQL_CONFIG = {
  host: process.env.MYSQL_HOST ?? '127.0.0.1',
  port: Number(process.env.MYSQL_PORT ?? 3306),
  user: process.env.MYSQL_USER ?? 'root',
  password: process.env.MYSQL_PASSWORD ?? '',
  database: process.env.MYSQL_DATABASE ?? 'test',
  connectTimeout: 5_000,
} as const;

/** A pool on the test MariaDB database. */
export function makeMysqlPool(connectionLimit = 10): mysql.Pool {
  return mysql.createPool({ ...MYSQL_CONFIG, connectionLimit });
}

/** `null` when MariaDB answers on `pool`; else why not (and a throw in CI). */
export async function mysqlUnavailable(pool: mysql.Pool): Promise<string | null> {
  const error = await pool.query('SELECT 1').then(
    () => null,
    (e: unknown) => (e instanceof Error ? e.message || String((e as { code?: unknown }).code) : String(e)),
  );
  return settle('MariaDB', error);
}

/** Redis of the tests. */
export const REDIS_URL = process.env.SMS_OUTBOX_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

function settle(what: string, error: string | null): string | null {
  if (error === null) return null;
  if (process.env.SMS_OUTBOX_REQUIRE_SERVICES === '1') {
    throw new Error(`${what} is required (SMS_OUTBOX_REQUIRE_SERVICES=1) but unreachable: ${error}`);
  }
  return `${what} unreachable (${error})`;
}

/** `null` when PostgreSQL answers; else why not (and a throw in CI). */
export async function postgresUnavailable(pool: pg.Pool): Promise<string | null> {
  const error = await pool.query('SELECT 1').then(
    () => null,
    (e: unknown) => (e instanceof Error ? e.message : String(e)),
  );
  return settle('PostgreSQL', error);
}

/** `null` when Redis answers PING on 127.0.0.1:6379; else why not (and a throw in CI). */
export async function redisUnavailable(): Promise<string | null> {
  const { hostname, port } = new URL(REDIS_URL);
  const error = await new Promise<string | null>((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port || 6379) });
    const done = (result: string | null) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(2000, () => done('timeout'));
    socket.once('error', (e) => done(e.message));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG') ? null : data.toString()));
  });
  return settle('Redis', error);
}

function redisClient() {
  return createClient({ url: REDIS_URL, socket: { connectTimeout: 2_000, reconnectStrategy: false } });
}

/** A test file's client of the test Redis ({@link connectTestRedis}). */
export interface TestRedis {
  /** The client; connected unless `unreachable` says why not. */
  client: ReturnType<typeof redisClient>;
  /** The client's raw commands, in the shape the package's Redis options take. */
  sendCommand: (...args: string[]) => Promise<unknown>;
  /** A prefix of this run's own, for every key the file writes: `close` deletes them. */
  prefix: string;
  /** `null` when connected; else why not (the file's tests skip). */
  unreachable: string | null;
  /** Deletes the keys under `prefix` and closes the client; nothing when unreachable. */
  close(): Promise<void>;
}

/**
 * Connects a client to the test Redis for one test file (`what` names its tests in the
 * skip notice). Unreachable, the file skips with a printed reason, or throws in CI. Several
 * files and runs share the server, so each call gets a fresh key prefix.
 */
export async function connectTestRedis(what: string): Promise<TestRedis> {
  const client = redisClient();
  // Without a listener a lost connection would be an unhandled 'error' and end the run.
  client.on('error', () => undefined);
  const error = await client.connect().then(
    () => null,
    (e: unknown) => (e instanceof Error ? e.message : String(e)),
  );
  const unreachable = settle(`Redis at ${REDIS_URL}`, error);
  if (unreachable !== null) console.warn(`${what} skipped: ${unreachable}`);
  const prefix = `sms-outbox-test:${randomBytes(6).toString('hex')}:`;
  return {
    client,
    sendCommand: (...args) => client.sendCommand(args),
    prefix,
    unreachable,
    close: async () => {
      if (unreachable !== null) return;
      const keys = await client.keys(`${prefix}*`);
      if (keys.length > 0) await client.del(keys);
      await client.close();
    },
  };
}

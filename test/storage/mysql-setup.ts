/**
 * What the MysqlRecordStore tests share: a pool on the test MariaDB, why they skip (printed
 * once per file; a failure instead when SMS_OUTBOX_REQUIRE_SERVICES=1), and table prefixes
 * of their own so that files and runs share the database without meeting.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, describe } from 'vitest';
import { MysqlRecordStore } from '../../src/storage/mysql/adapter.js';

/** Connection settings of the test MariaDB (MYSQL_* environment variables override). */
export const MYSQL_CONFIG = {
  host: process.env.MYSQL_HOST ?? '127.0.0.1',
  port: Number(process.env.MYSQL_PORT ?? 3306),
  user: process.env.MYSQL_USER ?? 'root',
  password: process.env.MYSQL_PASSWORD ?? '',
  database: process.env.MYSQL_DATABASE ?? 'test',
  connectTimeout: 5_000,
} as const;

/** A pool on the test database. */
export function makeMysqlPool(connectionLimit = 10): mysql.Pool {
  return mysql.createPool({ ...MYSQL_CONFIG, connectionLimit });
}

/** The pool of the calling test file; {@link useMysql} ends it after the file. */
export const pool = makeMysqlPool();

async function mysqlUnavailable(): Promise<string | null> {
  const error = await pool.query('SELECT 1').then(
    () => null,
    (e: unknown) => (e instanceof Error ? e.message || String((e as { code?: unknown }).code) : String(e)),
  );
  if (error === null) return null;
  if (process.env.SMS_OUTBOX_REQUIRE_SERVICES === '1') {
    throw new Error(`MariaDB is required (SMS_OUTBOX_REQUIRE_SERVICES=1) but unreachable: ${error}`);
  }
  return `MariaDB unreachable (${error})`;
}

/** Why the database tests are skipped, or `null` when MariaDB answers. */
export const unreachable = await mysqlUnavailable();
if (unreachable !== null) console.warn(`MysqlRecordStore tests skipped: ${unreachable}`);

/** `describe` when MariaDB answers, else `describe.skip` (the reason printed above). */
export const dbDescribe: typeof describe.skip = unreachable === null ? describe : describe.skip;

/** The prefixes made by {@link freshPrefix}, whose tables the file drops at its end. */
const made: string[] = [];

/** A table prefix no other test uses. */
export function freshPrefix(): string {
  const prefix = `t${randomBytes(5).toString('hex')}_`;
  made.push(prefix);
  return prefix;
}

/** A store on the file's pool under a fresh prefix, its schema created. */
export async function freshStore(): Promise<MysqlRecordStore> {
  const store = new MysqlRecordStore({ pool, tablePrefix: freshPrefix() });
  await store.ready();
  return store;
}

/** Drops the tables under `prefix`. */
export async function dropTables(prefix: string): Promise<void> {
  const tables = ['messages', 'carrier_ids', 'idempotency', 'credit', 'schema_version'].map((t) => `\`${prefix}${t}\``);
  await pool.query(`DROP TABLE IF EXISTS ${tables.join(', ')}`);
  made.splice(made.indexOf(prefix) >>> 0, 1);
}

/** Drops the tables of every prefix the file made, then ends the pool. */
export function useMysql(): void {
  afterAll(async () => {
    if (unreachable === null) for (const prefix of [...made]) await dropTables(prefix);
    await pool.end();
  });
}

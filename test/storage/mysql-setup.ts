/**
 * What the MysqlRecordStore tests share: a pool on the test MariaDB, why they skip (printed
 * once per file; a failure instead when SMS_OUTBOX_REQUIRE_SERVICES=1), and table prefixes
 * of their own so that files and runs share the database without meeting.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe } from 'vitest';
import { MysqlRecordStore } from '../../src/storage/mysql/adapter.js';
import { makeMysqlPool, mysqlUnavailable } from '../helpers/services.js';

export { makeMysqlPool, MYSQL_CONFIG } from '../helpers/services.js';

/** The pool of the calling test file; {@link useMysql} ends it after the file. */
export const pool = makeMysqlPool();

/** Why the database tests are skipped, or `null` when MariaDB answers. */
export const unreachable = await mysqlUnavailable(pool);
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
  const tables = ['messages', 'carrier_ids', 'idempotency', 'credit', 'unit_counters', 'schema_version', 'inbound', 'opt_outs', 'inbound_parts', 'report_head'].map((t) => `\`${prefix}${t}\``);
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

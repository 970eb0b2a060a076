/**
 * The bundled storages for a router test that must behave alike on each, every one made
 * fresh for its test and dropped by `cleanups` after it: memory, SQLite (a temp file),
 * PostgreSQL (a schema of its own) and MariaDB (tables under a prefix of its own). A
 * database's entry is marked `skip` when it is unreachable.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import type mysql from 'mysql2/promise';
import { MemoryStorage, type Storage } from '../../src/index.js';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { MysqlRecordStore } from '../../src/mysql.js';
import { createLedger } from '../../src/ledger/index.js';
import { afterAll, afterEach } from 'vitest';
import { makeMysqlPool, makePool, mysqlUnavailable, postgresUnavailable } from './services.js';

/** The tables a MySQL record store makes under its prefix. */
export const MYSQL_TABLES = ['messages', 'carrier_ids', 'idempotency', 'credit', 'unit_counters', 'schema_version', 'inbound', 'opt_outs', 'inbound_parts', 'report_head'];

/** One storage kind: its name, whether its tests skip, and how to make one on fresh data. */
export interface FreshStorage {
  name: string;
  skip: boolean;
  make: () => Storage;
}

/** What the kinds reach their databases with, and where each registers the dropping of its data. */
export interface FreshStorageServices {
  admin: pg.Pool;
  pgUnreachable: string | null;
  maria: mysql.Pool;
  mariaUnreachable: string | null;
  cleanups: (() => Promise<void> | void)[];
}

/** The two kinds that need no server: memory, and SQLite in a temp file that `cleanups` drops; `label` names the file's folder. */
export function localStorages(label: string, cleanups: (() => Promise<void> | void)[]): FreshStorage[] {
  return [
    { name: 'memory', skip: false, make: () => new MemoryStorage() },
    {
      name: 'SQLite',
      skip: false,
      make: () => {
        const dir = mkdtempSync(join(tmpdir(), `sms-${label}-`));
        cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
        return new SqliteStorage({ path: join(dir, 'outbox.db') });
      },
    },
  ];
}

/** The four kinds; `label` names their files, schemas and prefixes. */
export function freshStorages(label: string, { admin, pgUnreachable, maria, mariaUnreachable, cleanups }: FreshStorageServices): FreshStorage[] {
  return [
    ...localStorages(label, cleanups),
    {
      name: 'PostgreSQL',
      skip: pgUnreachable !== null,
      make: () => {
        const schema = `t_${label}_${randomBytes(5).toString('hex')}`;
        const pool = makePool(4);
        cleanups.push(async () => {
          await pool.end();
          await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        });
        return new PostgresStorage({ pool, schema });
      },
    },
    {
      name: 'MariaDB',
      skip: mariaUnreachable !== null,
      make: () => {
        const tablePrefix = `t${randomBytes(5).toString('hex')}_`;
        cleanups.push(async () => {
          await maria.query(`DROP TABLE IF EXISTS ${MYSQL_TABLES.map((table) => `\`${tablePrefix}${table}\``).join(', ')}`);
        });
        return createLedger(new MysqlRecordStore({ pool: maria, tablePrefix }));
      },
    },
  ];
}

/** What a router test over the four kinds shares: the services, and the gateways and data its tests leave to close and drop. */
export interface RouterTestServices<G> extends FreshStorageServices {
  /** The gateways a test started: each closed after it. */
  gateways: G[];
}

/**
 * Opens the pools {@link freshStorages} needs, says which databases are unreachable, and
 * registers the hooks that close each test's gateways and drop its data after it, and the
 * pools after the file.
 */
export async function routerTestServices<G extends { sms: { close(): Promise<void> } }>(): Promise<RouterTestServices<G>> {
  const admin = makePool(2);
  const pgUnreachable = await postgresUnavailable(admin);
  const maria = makeMysqlPool(4);
  const mariaUnreachable = await mysqlUnavailable(maria);
  afterAll(async () => {
    await admin.end();
    await maria.end();
  });
  const gateways: G[] = [];
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.sms.close();
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });
  return { admin, pgUnreachable, maria, mariaUnreachable, cleanups, gateways };
}

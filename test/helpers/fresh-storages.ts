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
import { makePool } from './services.js';

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

/** The four kinds; `label` names their files, schemas and prefixes. */
export function freshStorages(label: string, { admin, pgUnreachable, maria, mariaUnreachable, cleanups }: FreshStorageServices): FreshStorage[] {
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

/**
 * The bundled storages, for the inbound tests that must behave the same on each: memory,
 * SQLite (a file, so a second router opens what the first stored), PostgreSQL (a schema of
 * the test's own) and MariaDB (tables under a prefix of the test's own); each database's
 * tests skip with the reason printed when it is unreachable.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type mysql from 'mysql2/promise';
import { afterAll, afterEach } from 'vitest';
import { MemoryStorage, type SmsRouter, type Storage } from '../../src/index.js';
import { SqliteStorage } from '../../src/sqlite.js';
import { PostgresStorage } from '../../src/postgres.js';
import { MysqlRecordStore } from '../../src/mysql.js';
import { createLedger } from '../../src/ledger/index.js';
import { makeMysqlPool, makePool, mysqlUnavailable, postgresUnavailable } from '../helpers/services.js';
import { startReceiver, type Receiver } from './receiver.js';

/** One storage kind: `open` gives a storage on the same data each time (memory: one, kept open). */
export interface StorageKind {
  name: string;
  /** Why its tests skip, or `null`. */
  unavailable: string | null;
  /** Whether a second router may open the data the first one stored (closing the first). */
  durable: boolean;
  /** A storage on this kind's data. */
  open(): Storage;
  /** Deletes the data. */
  drop(): Promise<void>;
}

/** The four kinds, each on fresh data; `pool` reaches the test PostgreSQL, `maria` the test MariaDB. */
export function storageKinds(pool: pg.Pool, pgUnavailable: string | null, maria: mysql.Pool, mariaUnavailable: string | null): StorageKind[] {
  const dir = mkdtempSync(join(tmpdir(), 'sms-inbound-kinds-'));
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const tablePrefix = `t${randomBytes(5).toString('hex')}_`;
  let memory: MemoryStorage | null = null;
  return [
    {
      name: 'memory',
      unavailable: null,
      durable: false,
      open: () => (memory ??= new MemoryStorage()),
      drop: async () => void (memory = null),
    },
    {
      name: 'SQLite',
      unavailable: null,
      durable: true,
      open: () => new SqliteStorage({ path: join(dir, 'inbound.db') }),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    },
    {
      name: 'PostgreSQL',
      unavailable: pgUnavailable,
      durable: true,
      open: () => new PostgresStorage({ pool, schema }),
      drop: async () => {
        if (pgUnavailable === null) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      },
    },
    {
      name: 'MariaDB',
      unavailable: mariaUnavailable,
      durable: true,
      open: () => createLedger(new MysqlRecordStore({ pool: maria, tablePrefix })),
      drop: async () => {
        if (mariaUnavailable !== null) return;
        const tables = ['messages', 'carrier_ids', 'idempotency', 'credit', 'unit_counters', 'schema_version', 'inbound', 'opt_outs', 'inbound_parts', 'report_head'];
        await maria.query(`DROP TABLE IF EXISTS ${tables.map((table) => `\`${tablePrefix}${table}\``).join(', ')}`);
      },
    },
  ];
}

/** What {@link everyStorageKind} gives a test file. */
export interface StorageKindsBed {
  /** The four kinds, on data of this file's own. */
  kinds: StorageKind[];
  /** Routers the test started: closed after each test. */
  running: SmsRouter[];
  /** Starts a webhook receiver, closed after the test. */
  receiver(): Promise<Receiver>;
}

/**
 * Sets up a test file that runs on every kind: a PostgreSQL pool and a MariaDB pool (the
 * reason printed when `what` skips on one), and hooks that close the routers and receivers after each test and
 * drop every kind's data at the end.
 */
export async function everyStorageKind(what: string): Promise<StorageKindsBed> {
  const pool = makePool(4);
  const pgUnavailable = await postgresUnavailable(pool);
  if (pgUnavailable !== null) console.warn(`skipping the PostgreSQL ${what}: ${pgUnavailable}`);
  const maria = makeMysqlPool(4);
  const mariaUnavailable = await mysqlUnavailable(maria);
  if (mariaUnavailable !== null) console.warn(`skipping the MariaDB ${what}: ${mariaUnavailable}`);
  const kinds = storageKinds(pool, pgUnavailable, maria, mariaUnavailable);
  const running: SmsRouter[] = [];
  const receivers: Receiver[] = [];
  afterEach(async () => {
    for (const sms of running.splice(0)) await sms.close();
    for (const receiver of receivers.splice(0)) await receiver.close();
  });
  afterAll(async () => {
    for (const kind of kinds) await kind.drop();
    await pool.end();
    await maria.end();
  });
  return {
    kinds,
    running,
    receiver: async () => {
      const receiver = await startReceiver();
      receivers.push(receiver);
      return receiver;
    },
  };
}

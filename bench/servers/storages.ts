/**
 * The durable storages the benchmark children run on, opened from the harness's
 * environment: SQLite on the file BENCH_SQLITE_PATH (default synchronous mode);
 * PostgreSQL in the schema BENCH_PG_SCHEMA (the harness makes a fresh one per run and
 * drops it after), connected with the usual PG* variables, default 127.0.0.1:5432, user
 * postgres, database test, through a pool of 20; or MariaDB under the table prefix
 * BENCH_MYSQL_PREFIX (fresh per run, dropped after), at MYSQL_URL, default
 * mysql://root@127.0.0.1:3306/test, through a pool of 20.
 */
import type { Storage } from '../../src/index.js';
import { newMessageRef } from '../../src/outbox/message-ref.js';
import { countSms } from '../../src/sms/segments.js';
import type { NewMessage } from '../../src/storage/contract.js';
import { benchItems, BENCH_PROFILE } from './host.js';

/** Where the MariaDB cases connect. */
export const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

/** A storage opened for one benchmark child, and what closes what it opened beside it. */
export interface BenchStorage {
  storage: Storage;
  /** Closes the pool (PostgreSQL) after the storage is closed. */
  after: () => Promise<void>;
}

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
}

/** Opens the storage `kind` as the harness's environment describes it. */
export async function openBenchStorage(kind: 'sqlite' | 'postgres' | 'mysql'): Promise<BenchStorage> {
  if (kind === 'mysql') {
    const { default: mysql } = await import('mysql2/promise');
    const { MysqlRecordStore } = await import('../../src/mysql.js');
    const { createLedger } = await import('../../src/index.js');
    const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 20 });
    const store = new MysqlRecordStore({ pool, tablePrefix: required('BENCH_MYSQL_PREFIX') });
    return { storage: createLedger(store), after: () => pool.end() };
  }
  if (kind === 'sqlite') {
    const { SqliteStorage } = await import('../../src/sqlite.js');
    return { storage: new SqliteStorage({ path: required('BENCH_SQLITE_PATH') }), after: async () => undefined };
  }
  const schema = required('BENCH_PG_SCHEMA');
  const { default: pg } = await import('pg');
  const { PostgresStorage } = await import('../../src/postgres.js');
  const pool = new pg.Pool({
    host: process.env.PGHOST ?? '127.0.0.1',
    port: Number(process.env.PGPORT ?? 5432),
    user: process.env.PGUSER ?? 'postgres',
    database: process.env.PGDATABASE ?? 'test',
    max: 20,
  });
  return { storage: new PostgresStorage({ pool, schema }), after: () => pool.end() };
}

/**
 * A maker of one request's messages as the send handler makes them (src/http/send.ts) from
 * the bench body of `count` items (references `<prefix>-<i>`): new refs and the current
 * time at each call, with `callbackUrl` when given.
 */
export function benchMessages(count: number, prefix: string, callbackUrl: string | null = null): () => NewMessage[] {
  const items = benchItems(count, prefix);
  const { smsCount, encoding } = countSms(items[0]!.message);
  return () => {
    const now = Date.now();
    return items.map((item) => {
      const ref = newMessageRef(now);
      return {
        ref,
        principalId: 'bench',
        endpoint: 'quick',
        profileCode: BENCH_PROFILE,
        sender: BENCH_PROFILE,
        recipient: item.recipient,
        text: item.message,
        messageType: 1,
        reqType: 1,
        externalId: item.external_id,
        recipientField: 'recipient',
        referenceField: 'external_id',
        smsCount,
        encoding,
        callbackUrl,
        callbackSecret: callbackUrl === null ? null : 'bench-secret',
        createdAt: now,
        priority: 'bulk' as const,
        weight: 1,
      };
    });
  };
}


/** What a storage-alone child (store-insert.ts, store-life.ts) is told by the harness. */
export interface StoreBenchSettings {
  /** BENCH_STORE: the storage to open. */
  kind: 'sqlite' | 'postgres';
  /** BENCH_CONCURRENCY (default 8): callers working at once. */
  concurrency: number;
  /** BENCH_PER_CALL (default 100): messages each caller takes at a time. */
  perCall: number;
  /** BENCH_WARMUP_SEC (default 2), in ms. */
  warmupMs: number;
  /** BENCH_SECONDS (default 8), measured, in ms. */
  measuredMs: number;
}

/** The settings of a storage-alone child, from its environment. */
export function storeBenchSettings(): StoreBenchSettings {
  const kind = process.env.BENCH_STORE;
  if (kind !== 'sqlite' && kind !== 'postgres') throw new Error('BENCH_STORE must be sqlite or postgres');
  return {
    kind,
    concurrency: Number(process.env.BENCH_CONCURRENCY ?? 8),
    perCall: Number(process.env.BENCH_PER_CALL ?? 100),
    warmupMs: Number(process.env.BENCH_WARMUP_SEC ?? 2) * 1000,
    measuredMs: Number(process.env.BENCH_SECONDS ?? 8) * 1000,
  };
}

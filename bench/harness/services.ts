/**
 * What the cases run on besides the servers: PostgreSQL (reachable or not, a fresh schema
 * per run), MariaDB (reachable or not, fresh tables per run) and a fresh SQLite file per run.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerScript } from './servers.js';
import { scratch } from './scratch.js';
import { SkipError } from './skip.js';

const PG = {
  host: process.env.PGHOST ?? '127.0.0.1',
  port: Number(process.env.PGPORT ?? 5432),
  user: process.env.PGUSER ?? 'postgres',
  database: process.env.PGDATABASE ?? 'test',
};

/** Runs one SQL statement on a short-lived connection; rejects when PostgreSQL is unreachable. */
async function pgQuery(sql: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ ...PG, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

let pgProblem: string | null | undefined;
/** Why PostgreSQL cannot be used, or `null` when it is reachable; asked once per run. */
export async function postgresProblem(): Promise<string | null> {
  if (pgProblem === undefined) {
    try {
      await pgQuery('SELECT 1');
      pgProblem = null;
    } catch (error) {
      pgProblem = `PostgreSQL unreachable at ${PG.host}:${PG.port} (${(error as Error).message})`;
    }
  }
  return pgProblem;
}

/** Runs SQL statements on a short-lived MariaDB connection; rejects when MariaDB is unreachable. */
async function mysqlQuery(statements: readonly string[]): Promise<void> {
  const { default: mysql } = await import('mysql2/promise');
  const { MYSQL_URL } = await import('../servers/storages.js');
  const connection = await mysql.createConnection({ uri: MYSQL_URL, connectTimeout: 3000 });
  try {
    for (const sql of statements) await connection.query(sql);
  } finally {
    await connection.end();
  }
}

let mysqlProblem: string | null | undefined;
/** Why MariaDB cannot be used, or `null` when it is reachable; asked once per run. */
async function mariadbProblem(): Promise<string | null> {
  if (mysqlProblem === undefined) {
    try {
      await mysqlQuery(['SELECT 1']);
      mysqlProblem = null;
    } catch (error) {
      mysqlProblem = `MariaDB unreachable (${(error as Error).message})`;
    }
  }
  return mysqlProblem;
}

/** The tables a MariaDB record store makes under `prefix` (src/storage/sql/schema.ts). */
const MYSQL_TABLES = ['messages', 'carrier_ids', 'idempotency', 'credit', 'schema_version'];

let scratchCount = 0;

/** Env and cleanup giving `script` fresh storage for one server start. */
export async function freshStorage(script: ServerScript): Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }> {
  const n = scratchCount++;
  if (script === 'sqlite') {
    const dir = join(scratch, `sqlite-${n}`);
    mkdirSync(dir);
    return { env: { BENCH_SQLITE_PATH: join(dir, 'bench.db') }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  if (script === 'postgres') {
    const problem = await postgresProblem();
    if (problem !== null) throw new SkipError(problem);
    const schema = `bench_${process.pid}_${n}`;
    await pgQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    // CHECKPOINT after the drop: the server writes the run's dirty pages now, rather than
    // in the background during the next case (PostgreSQL is not pinned and shares core 0).
    const cleanup = async () => {
      await pgQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      await pgQuery('CHECKPOINT').catch(() => undefined);
    };
    return { env: { BENCH_PG_SCHEMA: schema }, cleanup };
  }
  if (script === 'mysql') {
    const problem = await mariadbProblem();
    if (problem !== null) throw new SkipError(problem);
    const prefix = `bench_${process.pid}_${n}_`;
    const drop = MYSQL_TABLES.map((table) => `DROP TABLE IF EXISTS \`${prefix}${table}\``);
    await mysqlQuery(drop);
    return { env: { BENCH_MYSQL_PREFIX: prefix }, cleanup: () => mysqlQuery(drop).catch(() => undefined) };
  }
  return { env: {}, cleanup: async () => undefined };
}

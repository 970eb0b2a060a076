/**
 * What the PostgresStorage tests share: the pool, why they skip (printed once per file),
 * fresh schemas, and counters of index reads and round trips.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { makePool, postgresUnavailable } from '../helpers/services.js';
import { afterAll, describe } from 'vitest';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';

/** The pool of the calling test file; {@link usePostgres} ends it after the file. */
export const pool = makePool();

/** Why the database tests are skipped, or `null` when PostgreSQL answers. */
export const unreachable = await postgresUnavailable(pool);
if (unreachable !== null) console.warn(`PostgresStorage tests skipped: ${unreachable}`);

/** `describe` when PostgreSQL answers, else `describe.skip` (the reason printed above). */
export const dbDescribe: typeof describe.skip = unreachable === null ? describe : describe.skip;

/** Ends the pool after the calling test file. */
export function usePostgres(): void {
  afterAll(async () => {
    await pool.end();
  });
}

/** What a schema made by this version records in `migrations`: the earlier adapter's versions end at 11, this one marks 12. */
export const ALL_VERSIONS = [{ version: 12 }];

/** The tables a PostgresStorage schema holds once ready: the record store's, the inbound ones and the migrations' record. */
export const SCHEMA_TABLES = ['inbound', 'inbound_parts', 'ledger_carrier_ids', 'ledger_credit', 'ledger_idempotency', 'ledger_messages', 'ledger_report_head', 'ledger_schema_version', 'ledger_unit_counters', 'migrations', 'opt_outs'];

/** A schema name no other test uses. */
export function freshSchema(): string {
  return `t_${randomBytes(6).toString('hex')}`;
}

/** Drops `schema` and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/**
 * Entries read so far from index `index` of `schema`, as the statistics count them. `single`
 * is a pool of one connection that did the reads: its pending counts are flushed first.
 */
export async function indexReads(single: pg.Pool, schema: string, index: string): Promise<number> {
  await single.query('SELECT pg_stat_force_next_flush()');
  const { rows } = await pool.query<{ reads: string }>(
    'SELECT idx_tup_read AS reads FROM pg_stat_user_indexes WHERE schemaname = $1 AND indexrelname = $2',
    [schema, index],
  );
  return Number(rows[0]!.reads);
}

/**
 * Runs `work` with a PostgresStorage in a fresh schema on a pool that counts the queries its
 * clients send (each one round trip; reset `queries.count` at will), then ends the pool and
 * drops the schema.
 */
export async function withCountedStorage(
  work: (t: { storage: PostgresStorage; queries: { count: number }; schema: string }) => Promise<void>,
): Promise<void> {
  const counted = makePool();
  const queries = { count: 0 };
  counted.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      queries.count += 1;
      return query(...args);
    };
  });
  const schema = freshSchema();
  try {
    await work({ storage: new PostgresStorage({ pool: counted, schema }), queries, schema });
  } finally {
    await counted.end();
    await dropSchema(schema);
  }
}

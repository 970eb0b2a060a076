/**
 * A schema as the earlier PostgreSQL adapter left it (test/fixtures/postgres-v11-dump.sql,
 * written by that adapter's own steps), loaded under a name of the caller's, and what that
 * adapter answered for each of its messages.
 */
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import type { MessageRecord } from '../../src/storage/contract.js';

const fixtures = new URL('../fixtures/', import.meta.url);

/** The dump's messages, by ref, as the earlier adapter's `getMessage` answered. */
export const LEGACY_RECORDS = JSON.parse(readFileSync(new URL('postgres-v11-records.json', fixtures), 'utf8')) as Record<string, MessageRecord>;

/** The uid of the dump's one pending delivery report (of `fx-delivered`). */
export const LEGACY_REPORT_UID = '0651ea43-c0c5-450a-b070-9c51008b008d';

/** The time the dump's messages were accepted at. */
export const LEGACY_T0 = 1_700_000_000_000;

/** Loads the dump into `schema` (which must not exist). */
export async function loadLegacyDump(pool: pg.Pool, schema: string): Promise<void> {
  const sql = readFileSync(new URL('postgres-v11-dump.sql', fixtures), 'utf8').replaceAll('legacy_fixture', schema);
  const client = await pool.connect();
  try {
    await client.query(sql);
  } finally {
    // The dump sets the session's search_path: this connection is not given back to the pool.
    client.release(true);
  }
}

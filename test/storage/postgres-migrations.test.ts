/**
 * PostgresStorage over a schema the earlier PostgreSQL adapter wrote: `ready()` moves every
 * message (every state, parts, carrier ids, pending reports, idempotency records, credit
 * balances and charges) into the record store's tables once, drops the earlier tables, and
 * the moved messages go on as if nothing had happened. A schema too old is refused.
 */
import { expect, it } from 'vitest';
import { outcome } from '../../src/lifecycle/states.js';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { legacySchema } from '../fixtures/postgres-legacy-migrations.js';
import { LEGACY_RECORDS, LEGACY_REPORT_UID, LEGACY_T0, loadLegacyDump } from '../helpers/postgres-legacy.js';
import { dbDescribe, dropSchema, freshSchema, pool, SCHEMA_TABLES, usePostgres } from './postgres-setup.js';

usePostgres();

const T = LEGACY_T0;
const DELIVERED = outcome('delivered', 'delivered_to_terminal');

/** The tables of `schema`, by name. */
async function tablesOf(schema: string): Promise<string[]> {
  const { rows } = await pool.query<{ table_name: string }>(
    'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
    [schema],
  );
  return rows.map((row) => row.table_name);
}

dbDescribe('PostgresStorage over the earlier adapter\'s schema', () => {
  it('moves every message, as that adapter answered it, and drops the earlier tables and functions', async () => {
    const schema = freshSchema();
    try {
      await loadLegacyDump(pool, schema);
      const storage = new PostgresStorage({ pool, schema });
      await storage.ready();
      for (const [ref, record] of Object.entries(LEGACY_RECORDS)) {
        expect(await storage.getMessage('e2e', ref), ref).toEqual(record);
      }
      expect(await tablesOf(schema)).toEqual(SCHEMA_TABLES);
      const functions = await pool.query(`SELECT 1 FROM pg_proc WHERE pronamespace = $1::regnamespace`, [schema]);
      expect(functions.rowCount).toBe(0);
      const versions = await pool.query<{ version: number }>(`SELECT max(version) AS version FROM "${schema}".migrations`);
      expect(versions.rows[0]!.version).toBe(12);
      // Another instance starting afterwards changes nothing.
      await new PostgresStorage({ pool, schema }).ready();
      expect(await storage.getMessage('e2e', 'fx-queued-1')).toEqual(LEGACY_RECORDS['fx-queued-1']);
    } finally {
      await dropSchema(schema);
    }
  });

  it('keeps the moved messages going: claims, scheduled sends, receipts by any carrier id, reports, keys and credit', async () => {
    const schema = freshSchema();
    try {
      await loadLegacyDump(pool, schema);
      const storage = new PostgresStorage({ pool, schema });
      await storage.ready();
      expect(await storage.findIdempotency('e2e', 'fx-key', T)).toMatchObject({ key: 'fx-key', body: '{"ok":true}' });
      expect(await storage.creditBalance('e2e')).toBe(9);

      const now = T + 100_000;
      const claimed = await storage.claimMessages({ owner: 'new', limit: 100, leaseMs: 30_000, now });
      // Transactional first; the message leased by an instance of the earlier version is free once its lease ended.
      expect(claimed.map((m) => m.ref)).toEqual(['fx-queued-2', 'fx-queued-1', 'fx-leased', 'fx-charged']);
      const promoted = await storage.promoteScheduled(now, 10);
      expect(promoted.map((t) => t.message.ref)).toEqual(['fx-scheduled-due']);

      // The charged message ends before the carrier had it: its unit comes back, once.
      await storage.finish('fx-charged', outcome('failed', 'unknown', 'gave up'), now);
      expect(await storage.creditBalance('e2e')).toBe(10);

      // A receipt names a part by the id it had before its second submission, or by its last.
      expect(await storage.applyReceipt({ carrierIds: ['fx-c0-first'], outcome: DELIVERED, now })).toMatchObject({ kind: 'part', ref: 'fx-submitted' });
      const ended = await storage.applyReceipt({ carrierIds: ['fx-c1'], outcome: DELIVERED, now });
      expect(ended).toMatchObject({ kind: 'terminal', ref: 'fx-submitted' });

      // The pending report keeps its uid and its attempts.
      const reports = await storage.claimCallbacks({ owner: 'new', limit: 10, leaseMs: 30_000, now });
      expect(reports.map((r) => [r.message.ref, r.uid, r.attempts])).toEqual([['fx-delivered', LEGACY_REPORT_UID, 0]]);
    } finally {
      await dropSchema(schema);
    }
  });

  it('five instances starting together on it move it once', async () => {
    const schema = freshSchema();
    try {
      await loadLegacyDump(pool, schema);
      await Promise.all(Array.from({ length: 5 }, () => new PostgresStorage({ pool, schema }).ready()));
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".ledger_messages`);
      expect(rows[0]).toEqual({ n: Object.keys(LEGACY_RECORDS).length });
    } finally {
      await dropSchema(schema);
    }
  });

  it('an empty schema of version 10 is brought over too; one before 10 is refused, untouched', async () => {
    const ten = freshSchema();
    const nine = freshSchema();
    try {
      await legacySchema((sql, params) => pool.query(sql, params), `"${ten}"`, 10);
      await new PostgresStorage({ pool, schema: ten }).ready();
      expect(await tablesOf(ten)).toContain('ledger_messages');
      expect(await tablesOf(ten)).not.toContain('messages');

      await legacySchema((sql, params) => pool.query(sql, params), `"${nine}"`, 9);
      await expect(new PostgresStorage({ pool, schema: nine }).ready()).rejects.toThrow(/at migration 9; start the previous release/);
      expect(await tablesOf(nine)).toContain('messages');
      expect(await tablesOf(nine)).not.toContain('ledger_messages');
    } finally {
      await dropSchema(ten);
      await dropSchema(nine);
    }
  });
});

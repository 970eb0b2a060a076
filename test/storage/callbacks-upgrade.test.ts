/**
 * The schema step of report recovery on tables an earlier version made: the
 * `callback_state` column is added and filled from each stored row, with its index, so the
 * reports of messages stored before the upgrade are listed and replayed like new ones. On
 * SQLite, PostgreSQL and MariaDB, each by undoing the step on fresh tables (what the earlier
 * version had) and opening them again.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createLedger } from '../../src/ledger/index.js';
import { MysqlRecordStore } from '../../src/storage/mysql/adapter.js';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';
import type { Storage } from '../../src/storage/contract.js';
import { buildNewMessage, FAILED, LEASE, T0 } from '../../src/testing/storage-suite/fixtures.js';
import { makeMysqlPool, makePool, mysqlUnavailable, postgresUnavailable } from '../helpers/services.js';

const pgPool = makePool(4);
const mysqlPool = makeMysqlPool(4);
const pgUnreachable = await postgresUnavailable(pgPool);
const mysqlUnreachable = await mysqlUnavailable(mysqlPool);
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await pgPool.end();
  await mysqlPool.end();
});

/** Stores three reported messages of `key-a`: one report failed, one delivered, one pending; their refs. */
async function fill(storage: Storage) {
  const [failed, delivered, pending] = [1, 2, 3].map((i) => buildNewMessage({ principalId: 'key-a', createdAt: T0 + i, callbackUrl: 'https://client.example/dlr' }));
  await storage.insertMessages([failed!, delivered!]);
  for (const message of [failed!, delivered!]) await storage.finish(message.ref, FAILED, T0 + 10);
  for (const report of await storage.claimCallbacks({ owner: 'up', limit: 10, leaseMs: LEASE, now: T0 + 20 })) {
    const ok = report.message.ref === delivered!.ref;
    await storage.recordCallbackAttempt(report.uid, { result: ok ? 'delivered' : 'failed', statusCode: ok ? 200 : 500, error: ok ? null : 'HTTP 500', nextAttemptAt: null, now: T0 + 21 });
  }
  await storage.insertMessages([pending!]);
  await storage.finish(pending!.ref, FAILED, T0 + 30);
  return { failed: failed!.ref, pending: pending!.ref };
}

/** What the upgraded storage lists and replays of the reports {@link fill} stored before the step. */
async function expectRecovered(storage: Storage, refs: { failed: string; pending: string }): Promise<void> {
  const list = async (states: ('failed' | 'pending')[]) => (await storage.listCallbacks!({ principalId: 'key-a', limit: 10, states })).messages.map((m) => m.ref);
  expect(await list([])).toEqual([refs.pending, refs.failed]);
  expect(await list(['failed'])).toEqual([refs.failed]);
  expect(await storage.replayCallbacks!({ principalId: 'key-a' }, T0 + 100)).toBe(1);
  expect(await list(['failed'])).toEqual([]);
}

/** The step's index and column. */
const INDEX = 'messages_callbacks';
const COLUMN = 'callback_state';

describe('report recovery on tables made before it', () => {
  it('SQLite: fills the new column from every stored row', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sms-callbacks-upgrade-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'outbox.db');
    const before = new SqliteStorage({ path });
    const refs = await fill(before);
    await before.close();
    const db = new Database(path);
    db.exec(`DROP INDEX "sms_outbox_${INDEX}"`);
    db.exec(`ALTER TABLE sms_outbox_messages DROP COLUMN ${COLUMN}`);
    db.exec('DELETE FROM sms_outbox_schema_version WHERE version = 7');
    db.close();
    const after = new SqliteStorage({ path });
    cleanups.push(() => after.close());
    await expectRecovered(after, refs);
  });

  it.skipIf(pgUnreachable !== null)('PostgreSQL: fills the new column from every stored row', async () => {
    const schema = `t_cb_up_${randomBytes(5).toString('hex')}`;
    cleanups.push(async () => void (await pgPool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)));
    const before = new PostgresStorage({ pool: pgPool, schema });
    const refs = await fill(before);
    await before.close();
    await pgPool.query(`DROP INDEX "${schema}"."ledger_${INDEX}"`);
    await pgPool.query(`ALTER TABLE "${schema}".ledger_messages DROP COLUMN ${COLUMN}`);
    await pgPool.query(`DELETE FROM "${schema}".ledger_schema_version WHERE version = 7`);
    await expectRecovered(new PostgresStorage({ pool: pgPool, schema }), refs);
  });

  it.skipIf(mysqlUnreachable !== null)('MariaDB: fills the new column from every stored row', async () => {
    const tablePrefix = `t${randomBytes(5).toString('hex')}_`;
    const table = `\`${tablePrefix}messages\``;
    cleanups.push(async () => {
      for (const name of ['messages', 'carrier_ids', 'idempotency', 'credit', 'unit_counters', 'schema_version', 'inbound', 'opt_outs', 'inbound_parts', 'report_head']) {
        await mysqlPool.query(`DROP TABLE IF EXISTS \`${tablePrefix}${name}\``);
      }
    });
    const before = createLedger(new MysqlRecordStore({ pool: mysqlPool, tablePrefix }));
    await before.ready!();
    const refs = await fill(before);
    await mysqlPool.query(`DROP INDEX \`${tablePrefix}${INDEX}\` ON ${table}`);
    await mysqlPool.query(`ALTER TABLE ${table} DROP COLUMN ${COLUMN}`);
    await mysqlPool.query(`DELETE FROM \`${tablePrefix}schema_version\` WHERE version = 7`);
    const after = createLedger(new MysqlRecordStore({ pool: mysqlPool, tablePrefix }));
    await after.ready!();
    await expectRecovered(after, refs);
  });
});

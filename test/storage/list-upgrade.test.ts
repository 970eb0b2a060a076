/**
 * The schema step of the message list on tables an earlier version made: the recipient,
 * state and profile columns are added and filled from each stored row, with their indexes,
 * so messages stored before the upgrade are listed and filtered like new ones. On SQLite,
 * PostgreSQL and MariaDB, each by undoing the step on fresh tables (what the earlier version
 * had) and opening them again.
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
import { buildNewMessage, FAILED, T0 } from '../../src/testing/storage-suite/fixtures.js';
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

/** The indexes and columns the list step adds. */
const INDEXES = ['messages_list', 'messages_list_state', 'messages_list_recipient', 'messages_list_profile'];
const COLUMNS = ['recipient', 'state', 'profile_code'];

/** Stores three messages of `key-a` (one failed) and one of `key-b`; their refs. */
async function fill(storage: Storage) {
  const a = buildNewMessage({ principalId: 'key-a', createdAt: T0 + 1, recipient: '254700000001', profileCode: 'P1' });
  const b = buildNewMessage({ principalId: 'key-a', createdAt: T0 + 2, recipient: '254700000002', profileCode: 'P2' });
  const c = buildNewMessage({ principalId: 'key-a', createdAt: T0 + 3, recipient: '254700000001', profileCode: 'P2' });
  await storage.insertMessages([a, b, c]);
  await storage.insertMessages([buildNewMessage({ principalId: 'key-b', createdAt: T0 + 4 })]);
  await storage.finish(b.ref, FAILED, T0 + 10);
  return { a: a.ref, b: b.ref, c: c.ref };
}

/** What the upgraded storage lists of the messages {@link fill} stored before the step. */
async function expectListed(storage: Storage, refs: { a: string; b: string; c: string }): Promise<void> {
  const list = async (query: object) => (await storage.listMessages!({ principalId: 'key-a', limit: 10, ...query })).messages.map((m) => m.ref);
  expect(await list({})).toEqual([refs.c, refs.b, refs.a]);
  expect(await list({ states: ['failed'] })).toEqual([refs.b]);
  expect(await list({ states: ['queued'] })).toEqual([refs.c, refs.a]);
  expect(await list({ recipient: '254700000001' })).toEqual([refs.c, refs.a]);
  expect(await list({ profileCode: 'P2' })).toEqual([refs.c, refs.b]);
}

describe('the message list on tables made before it', () => {
  it('SQLite: fills the new columns from every stored row', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sms-list-upgrade-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'outbox.db');
    const before = new SqliteStorage({ path });
    const refs = await fill(before);
    await before.close();
    const db = new Database(path);
    for (const index of INDEXES) db.exec(`DROP INDEX "sms_outbox_${index}"`);
    for (const column of COLUMNS) db.exec(`ALTER TABLE sms_outbox_messages DROP COLUMN ${column}`);
    // The step after it (the report log) is undone too.
    db.exec('DROP INDEX sms_outbox_messages_reports');
    db.exec('ALTER TABLE sms_outbox_messages DROP COLUMN report_seq');
    db.exec('DROP TABLE sms_outbox_report_head');
    db.exec('DELETE FROM sms_outbox_schema_version WHERE version IN (5, 6)');
    db.close();
    const after = new SqliteStorage({ path });
    cleanups.push(() => after.close());
    await expectListed(after, refs);
  });

  it.skipIf(pgUnreachable !== null)('PostgreSQL: fills the new columns from every stored row', async () => {
    const schema = `t_list_up_${randomBytes(5).toString('hex')}`;
    cleanups.push(async () => void (await pgPool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)));
    const before = new PostgresStorage({ pool: pgPool, schema });
    const refs = await fill(before);
    await before.close();
    for (const index of INDEXES) await pgPool.query(`DROP INDEX "${schema}"."ledger_${index}"`);
    for (const column of COLUMNS) await pgPool.query(`ALTER TABLE "${schema}".ledger_messages DROP COLUMN ${column}`);
    await pgPool.query(`ALTER TABLE "${schema}".ledger_messages DROP COLUMN report_seq`);
    await pgPool.query(`DROP TABLE "${schema}".ledger_report_head`);
    await pgPool.query(`DELETE FROM "${schema}".ledger_schema_version WHERE version IN (5, 6)`);
    await expectListed(new PostgresStorage({ pool: pgPool, schema }), refs);
  });

  it.skipIf(mysqlUnreachable !== null)('MariaDB: fills the new columns from every stored row', async () => {
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
    for (const index of INDEXES) await mysqlPool.query(`DROP INDEX \`${tablePrefix}${index}\` ON ${table}`);
    for (const column of COLUMNS) await mysqlPool.query(`ALTER TABLE ${table} DROP COLUMN ${column}`);
    await mysqlPool.query(`DROP INDEX \`${tablePrefix}messages_reports\` ON ${table}`);
    await mysqlPool.query(`ALTER TABLE ${table} DROP COLUMN report_seq`);
    await mysqlPool.query(`DROP TABLE \`${tablePrefix}report_head\``);
    await mysqlPool.query(`DELETE FROM \`${tablePrefix}schema_version\` WHERE version IN (5, 6)`);
    const after = createLedger(new MysqlRecordStore({ pool: mysqlPool, tablePrefix }));
    await after.ready!();
    await expectListed(after, refs);
  });
});

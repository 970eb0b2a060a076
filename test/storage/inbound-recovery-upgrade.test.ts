/**
 * Inbound webhook recovery on inbound tables an earlier version made: the
 * `cb_restarted_after` column and the index by principal and webhook state are added on
 * start, so the failed inbound webhooks stored before are listed and replayed like new
 * ones. On SQLite, PostgreSQL and MariaDB, each by undoing the change on fresh tables (what
 * the earlier version had; on MariaDB, the store's own step 102) and opening them again.
 */
import { randomBytes, randomUUID } from 'node:crypto';
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
import { LEASE, T0 } from '../../src/testing/storage-suite/fixtures.js';
import { buildInbound } from '../../src/testing/storage-suite/inbound.js';
import { makeMysqlPool, makePool, mysqlUnavailable, postgresUnavailable } from '../helpers/services.js';

const pgPool = makePool(4);
const mysqlPool = makeMysqlPool(4);
const pgUnreachable = await postgresUnavailable(pgPool);
const mysqlUnreachable = await mysqlUnavailable(mysqlPool);
if (pgUnreachable !== null) console.warn(`skipping the PostgreSQL case: ${pgUnreachable}`);
if (mysqlUnreachable !== null) console.warn(`skipping the MariaDB case: ${mysqlUnreachable}`);
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await pgPool.end();
  await mysqlPool.end();
});

/** Stores two inbound messages of `acme` whose webhooks fail and are delivered; the failed one's ref. */
async function fill(storage: Storage): Promise<string> {
  const [failed, delivered] = [1, 2].map((i) => buildInbound({ ref: randomUUID(), receivedAt: T0 + i }));
  for (const message of [failed!, delivered!]) await storage.insertInbound!(message);
  for (const due of await storage.claimInbound!({ owner: 'up', limit: 10, leaseMs: LEASE, now: T0 + 10 })) {
    const ok = due.inbound.ref === delivered!.ref;
    await storage.recordInboundAttempt!(due.uid, { result: ok ? 'delivered' : 'failed', statusCode: ok ? 200 : 503, error: ok ? null : 'HTTP 503', nextAttemptAt: null, now: T0 + 11 });
  }
  return failed!.ref;
}

/** What the upgraded storage lists and replays of the webhooks {@link fill} stored before the change. */
async function expectRecovered(storage: Storage, failed: string): Promise<void> {
  const list = async () => (await storage.listInboundWebhooks!({ principalId: 'acme', limit: 10 })).inbound.map((m) => [m.ref, m.callback?.state]);
  expect(await list()).toEqual([[failed, 'failed']]);
  expect(await storage.replayInboundWebhooks!({ principalId: 'acme', since: T0 }, T0 + 100)).toBe(1);
  const due = await storage.claimInbound!({ owner: 'after', limit: 10, leaseMs: LEASE, now: T0 + 100 });
  expect(due.map((d) => [d.inbound.ref, d.attempts, d.inbound.callback?.restartedAfter])).toEqual([[failed, 1, 1]]);
}

describe('inbound webhook recovery on inbound tables made before it', () => {
  it('SQLite: adds the column and the index on start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sms-inbound-recovery-upgrade-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'outbox.db');
    const before = new SqliteStorage({ path });
    await before.ready();
    const failed = await fill(before);
    await before.close();
    const db = new Database(path);
    db.exec('DROP INDEX sms_inbound_open');
    db.exec('ALTER TABLE sms_inbound DROP COLUMN cb_restarted_after');
    db.close();
    const after = new SqliteStorage({ path });
    cleanups.push(() => after.close());
    await after.ready();
    await expectRecovered(after, failed);
  });

  it.skipIf(pgUnreachable !== null)('PostgreSQL: adds the column and the index on start', async () => {
    const schema = `t_in_up_${randomBytes(5).toString('hex')}`;
    cleanups.push(async () => void (await pgPool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)));
    const before = new PostgresStorage({ pool: pgPool, schema });
    await before.ready();
    const failed = await fill(before);
    await before.close();
    await pgPool.query(`DROP INDEX "${schema}".inbound_open_idx`);
    await pgPool.query(`ALTER TABLE "${schema}".inbound DROP COLUMN cb_restarted_after`);
    const after = new PostgresStorage({ pool: pgPool, schema });
    await after.ready();
    await expectRecovered(after, failed);
  });

  it.skipIf(mysqlUnreachable !== null)('MariaDB: applies the store\u2019s own step 102', async () => {
    const tablePrefix = `t${randomBytes(5).toString('hex')}_`;
    const table = `\`${tablePrefix}inbound\``;
    cleanups.push(async () => {
      for (const name of ['messages', 'carrier_ids', 'idempotency', 'credit', 'unit_counters', 'schema_version', 'inbound', 'opt_outs', 'inbound_parts', 'report_head']) {
        await mysqlPool.query(`DROP TABLE IF EXISTS \`${tablePrefix}${name}\``);
      }
    });
    const before = createLedger(new MysqlRecordStore({ pool: mysqlPool, tablePrefix }));
    await before.ready!();
    const failed = await fill(before);
    await mysqlPool.query(`DROP INDEX \`${tablePrefix}inbound_open\` ON ${table}`);
    await mysqlPool.query(`ALTER TABLE ${table} DROP COLUMN cb_restarted_after`);
    await mysqlPool.query(`DELETE FROM \`${tablePrefix}schema_version\` WHERE version = 102`);
    const after = createLedger(new MysqlRecordStore({ pool: mysqlPool, tablePrefix }));
    await after.ready!();
    await expectRecovered(after, failed);
  });
});

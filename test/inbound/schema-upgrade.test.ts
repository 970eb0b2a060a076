/**
 * The migration that brings MO redelivery and long MO parts is additive: a SQLite file or
 * PostgreSQL schema of the version before it, with an inbound message stored, upgrades in
 * place; the message is kept, and the new steps work beside it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { NewInbound, Storage } from '../../src/index.js';
import { SqliteStorage } from '../../src/sqlite.js';
import { PostgresStorage } from '../../src/postgres.js';
import { MIGRATIONS } from '../fixtures/sqlite-v11/legacy-migrations.js';
import { legacySchema } from '../fixtures/postgres-legacy-migrations.js';
import { makePool, postgresUnavailable } from '../helpers/services.js';

const pool = makePool(4);
const pgUnavailable = await postgresUnavailable(pool);
if (pgUnavailable !== null) console.warn(`skipping the PostgreSQL upgrade test: ${pgUnavailable}`);
const dir = mkdtempSync(join(tmpdir(), 'sms-inbound-upgrade-'));
const schema = `t_${randomBytes(6).toString('hex')}`;
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (pgUnavailable === null) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
});

const at = 1_700_000_000_000;
const inbound = (text: string, receivedAt: number): NewInbound => ({
  ref: randomUUID(), principalId: null, profileCode: null, from: '254700000101', to: '22021',
  text, receivedAt, callbackUrl: null, callbackSecret: null, uid: null,
});
/** The inbound row the earlier version stored, as its columns. */
const OLD_ROW = { ref: 'old-ref', from: '254700000101', to: '22021', text: 'Hello', at };

/** What an upgraded storage must do: keep the old row, store once, keep parts. */
async function checkUpgraded(storage: Storage): Promise<void> {
  const once = { key: 'k-hello', since: at };
  expect((await storage.listInbound!({ limit: 5 })).map((r) => r.ref)).toEqual([OLD_ROW.ref]);
  // The old row has no redelivery key: the same text after it is a new message.
  expect(await storage.insertInbound!(inbound('Hello', at + 1), { once })).toEqual({ optOutChanged: false });
  expect(await storage.insertInbound!(inbound('Hello', at + 2), { once })).toEqual({ optOutChanged: false, duplicate: true });
  const part = { key: 'm', seq: 1, total: 2, text: 'a', receivedAt: at };
  expect(await storage.storeInboundPart!(part)).toEqual([part]);
  await storage.close?.();
}

describe('the inbound migration on an earlier schema', () => {
  it('SQLite: a file of the version before upgrades in place', async () => {
    const path = join(dir, 'v10.db');
    const db = new Database(path);
    for (const step of MIGRATIONS.slice(0, 10)) db.exec(step);
    db.pragma('user_version = 10');
    db.prepare('INSERT INTO sms_inbound (ref, from_number, to_address, text, received_at) VALUES (?, ?, ?, ?, ?)')
      .run(OLD_ROW.ref, OLD_ROW.from, OLD_ROW.to, OLD_ROW.text, OLD_ROW.at);
    db.close();
    await checkUpgraded(new SqliteStorage({ path }));
  });

  it.skipIf(pgUnavailable !== null)('PostgreSQL: a schema of the version before upgrades in place', async () => {
    const s = `"${schema}"`;
    // As the earlier PostgreSQL adapter's migrations left it at version 10.
    await legacySchema((sql, params) => pool.query(sql, params), s, 10);
    await pool.query(`INSERT INTO ${s}.inbound (ref, from_number, to_address, text, received_at) VALUES ($1, $2, $3, $4, $5)`, [
      OLD_ROW.ref, OLD_ROW.from, OLD_ROW.to, OLD_ROW.text, OLD_ROW.at,
    ]);
    await checkUpgraded(new PostgresStorage({ pool, schema }));
  });
});

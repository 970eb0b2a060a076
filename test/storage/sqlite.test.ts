import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';
import type { MessageRecord } from '../../src/storage/contract.js';
import request from 'supertest';
import { staticKeys } from '../../src/index.js';
import { createGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';
import { buildNewMessage, runStorageContract } from '../../src/testing/storage-suite/index.js';
import { outcome } from '../../src/lifecycle/states.js';

const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-sqlite-'));

/** A copy of the file written by 0.1.0's SQLite storage (test/fixtures/sqlite-v11/generate.ts), with what it answered. */
function legacyFile() {
  const fixture = new URL('../fixtures/sqlite-v11/', import.meta.url).pathname;
  const expected = JSON.parse(readFileSync(join(fixture, 'expected.json'), 'utf8')) as {
    at: number;
    principal: string;
    balance: number;
    refs: Record<string, string>;
    records: Record<string, MessageRecord>;
  };
  const path = newPath();
  copyFileSync(join(fixture, 'legacy.sqlite'), path);
  return { expected, path };
}
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileCounter = 0;
const newPath = (): string => join(dir, `db-${++fileCounter}.sqlite`);

runStorageContract({ describe, it }, { name: 'SqliteStorage', create: async () => new SqliteStorage({ path: newPath() }) });

/** Frames in the WAL file now; a checkpoint first empties it so the next writes start at 0. */
function walFrames(db: Database.Database): number {
  const [row] = db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
  return row!.log;
}

describe('SqliteStorage', () => {
  it('keeps acknowledged messages and their state across close and reopen', async () => {
    const path = newPath();
    const first = new SqliteStorage({ path });
    const message = buildNewMessage({ smsCount: 2, callbackUrl: 'https://client.example/dlr' });
    await first.insertMessages([message]);
    await first.recordSubmission(message.ref, 0, 'c0', message.createdAt + 1);
    await first.close();

    const second = new SqliteStorage({ path });
    const record = await second.getMessage(message.principalId, message.ref);
    expect(record?.state).toBe('queued');
    expect(record?.parts.map((part) => part.carrierId)).toEqual(['c0', null]);
    const claimed = await second.claimMessages({ owner: 'w', limit: 10, leaseMs: 1_000, now: message.createdAt + 2 });
    expect(claimed.map((m) => m.ref)).toEqual([message.ref]);
    await second.close();
  });

  it('sets WAL mode, synchronous FULL by default and NORMAL when asked, and the schema version', async () => {
    const full = new Database(newPath());
    const normal = new Database(newPath());
    const a = new SqliteStorage({ database: full });
    const b = new SqliteStorage({ database: normal, synchronous: 'NORMAL', busyTimeoutMs: 1234 });
    await Promise.all([a.ready(), b.ready()]);
    expect(full.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(full.pragma('synchronous', { simple: true })).toBe(2);
    expect(normal.pragma('synchronous', { simple: true })).toBe(1);
    expect(full.pragma('user_version', { simple: true })).toBe(12);
    await a.close();
    await b.close();
    // The host's handles stay open: close() only closes what the adapter opened.
    expect(full.open).toBe(true);
    expect(full.prepare('SELECT count(*) AS n FROM sms_outbox_messages').get()).toEqual({ n: 0 });
    full.close();
    normal.close();
  });

  it('upgrades a file written by 0.1.0: every message keeps its state, parts, report and place, and goes on', async () => {
    const { expected, path } = legacyFile();
    const { at, principal, refs } = expected;
    const storage = new SqliteStorage({ path });
    await storage.ready();
    for (const [name, record] of Object.entries(expected.records)) {
      expect(await storage.getMessage(principal, refs[name]!), name).toEqual(record);
    }
    expect(await storage.creditBalance(principal)).toBe(expected.balance);
    expect((await storage.findIdempotency(principal, 'idem-1', at))?.status).toBe(202);
    const names = (messages: { ref: string }[]) => messages.map((m) => Object.keys(refs).find((name) => refs[name] === m.ref)).sort();
    // The queued ones are claimed in their places (transactional first), the leased and retrying ones once due.
    const claimed = await storage.claimMessages({ owner: 'new-worker', limit: 20, leaseMs: 10_000_000, now: at + 30_000 });
    expect(names(claimed)).toEqual(['partial', 'queued-a', 'queued-b', 'valid']);
    expect(claimed[0]!.ref).toBe(refs['queued-b']);
    expect(names(await storage.claimMessages({ owner: 'new-worker', limit: 20, leaseMs: 1_000, now: at + 600_000 }))).toEqual(['leased', 'retrying']);
    // A part submitted before the upgrade, and a receipt for one, are found by their carrier ids.
    expect(await storage.recordSubmission(refs.partial!, 1, 'c-partial-1', at + 600_001)).toMatchObject({ kind: 'submitted' });
    const receipt = (carrierId: string) =>
      storage.applyReceipt({ carrierIds: [carrierId], outcome: { state: 'delivered', reason: 'delivered_to_terminal', description: 'ok' }, now: at + 600_002 });
    expect((await receipt('c-partial-0')).kind).toBe('part');
    expect((await receipt('c-partial-1')).kind).toBe('terminal');
    expect((await receipt('c-submitted')).kind).toBe('terminal');
    expect((await receipt('c-delivered')).kind).toBe('duplicate');
    // The pending report of `delivered` is claimed once its old lease ends.
    expect(names((await storage.claimCallbacks({ owner: 'new-worker', limit: 10, leaseMs: 1_000, now: at + 600_003 })).map((r) => r.message))).toContain('delivered');
    // The scheduled one is promoted at its time; the charged message ended unsent gives its unit back.
    expect(names((await storage.promoteScheduled(at + 3_600_000, 10)).map((t) => t.message))).toEqual(['scheduled']);
    expect(await storage.finish(refs['queued-a']!, { state: 'failed', reason: 'rejected', description: 'x' }, at + 600_004)).not.toBeNull();
    expect(await storage.creditBalance(principal)).toBe(expected.balance + 1);
    await storage.close();
    const upgraded = new Database(path);
    expect(upgraded.pragma('user_version', { simple: true })).toBe(12);
    const tables = upgraded.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sms_outbox%' ORDER BY name`).pluck().all();
    expect(tables).toEqual(['sms_inbound', 'sms_inbound_parts', 'sms_opt_outs']);
    upgraded.close();
    // Upgraded once: opening it again changes nothing.
    const again = new SqliteStorage({ path });
    expect((await again.getMessage(principal, refs.reported!))?.callback?.state).toBe('delivered');
    await again.close();
  });

  it('answers the status of an upgraded file\'s messages through the router, and its worker delivers the queued ones', async () => {
    const { expected, path } = legacyFile();
    const storage = new SqliteStorage({ path });
    const { app, sms } = createGateway({
      storage,
      verifyKey: staticKeys([{ key: 'legacy-key', id: expected.principal, profiles: ['PROFILE1'], scopes: ['quick', 'premium'] }]),
    });
    const status = async (name: string) =>
      (await request(app).get(`/api/outbox/delivery-status/${expected.refs[name]}`).set('X-API-Key', 'legacy-key')).body as { status?: string };
    try {
      expect((await status('reported')).status).toBe('delivered');
      // Stored in 2023: every queued one is due (and `valid` past its validity), the scheduled one too.
      for (const name of ['queued-a', 'queued-b', 'valid', 'retrying', 'leased', 'scheduled']) {
        await eventually(async () => !['queued', 'scheduled'].includes((await status(name)).status!), { what: `${name} submitted`, timeoutMs: 15_000 });
      }
      expect((await status('queued-a')).status).not.toBe('expired');
      expect((await status('valid')).status).toBe('expired');
    } finally {
      await sms.close();
      await storage.close();
    }
  });

  it('creates the schema once when two instances open a new file together', async () => {
    const path = newPath();
    const a = new SqliteStorage({ path });
    const b = new SqliteStorage({ path });
    await Promise.all([a.ready(), b.ready(), a.ready()]);
    const message = buildNewMessage();
    await a.insertMessages([message]);
    expect((await b.getMessage(message.principalId, message.ref))?.ref).toBe(message.ref);
    await Promise.all([a.close(), b.close()]);
  });

  it('refuses a database whose schema is newer than it knows', async () => {
    const db = new Database(newPath());
    db.pragma('user_version = 99');
    const storage = new SqliteStorage({ database: db });
    await expect(storage.ready()).rejects.toThrow(/newer than this sms-outbox knows/);
    db.close();
  });

  it('rejects bad options at construction, with a hint for a typo', () => {
    expect(() => new SqliteStorage({ path: newPath(), sychronous: 'FULL' } as never)).toThrow(
      /unknown option `sychronous`.*Did you mean `synchronous`/,
    );
    expect(() => new SqliteStorage({})).toThrow(/exactly one of `path`/);
    expect(() => new SqliteStorage({ path: newPath(), database: new Database(':memory:') })).toThrow(/exactly one/);
    expect(() => new SqliteStorage({ path: newPath(), synchronous: 'OFF' as never })).toThrow(/'FULL' or 'NORMAL'/);
    expect(() => new SqliteStorage({ path: newPath(), busyTimeoutMs: -1 })).toThrow(/busyTimeoutMs/);
    // A missing folder is created (test/storage/sqlite-path.test.ts); one that cannot be is an error.
    writeFileSync(join(dir, 'a-file'), '');
    expect(() => new SqliteStorage({ path: join(dir, 'a-file', 'x.sqlite') })).toThrow(/cannot create the folder/);
  });

  it('commits concurrent inserts together, in far fewer WAL frames than one commit each', async () => {
    const db = new Database(newPath());
    const storage = new SqliteStorage({ database: db });
    await storage.ready();
    // No checkpoint of its own while counting: one at 1,000 frames would restart the count.
    db.pragma('wal_autocheckpoint = 0');

    walFrames(db);
    const together = Array.from({ length: 100 }, (_, i) => buildNewMessage({ createdAt: 1_000 + i }));
    await Promise.all(together.map((message) => storage.insertMessages([message])));
    const groupedFrames = walFrames(db);

    const oneByOne = Array.from({ length: 100 }, (_, i) => buildNewMessage({ createdAt: 2_000 + i }));
    for (const message of oneByOne) await storage.insertMessages([message]);
    const sequentialFrames = walFrames(db);

    expect(groupedFrames).toBeGreaterThan(0);
    expect(sequentialFrames).toBeGreaterThanOrEqual(100);
    expect(groupedFrames * 10).toBeLessThan(sequentialFrames);
    const claimed = await storage.claimMessages({ owner: 'w', limit: 500, leaseMs: 1_000, now: 10_000 });
    expect(claimed).toHaveLength(200);
    await storage.close();
    db.close();
  });

  it('fails only the batch with a taken ref when it shares a commit with others', async () => {
    const storage = new SqliteStorage({ path: newPath() });
    const existing = buildNewMessage();
    await storage.insertMessages([existing]);
    const good1 = [buildNewMessage(), buildNewMessage()];
    const bad = [buildNewMessage(), buildNewMessage({ ref: existing.ref })];
    const good2 = [buildNewMessage()];
    const results = await Promise.allSettled([
      storage.insertMessages(good1),
      storage.insertMessages(bad),
      storage.insertMessages(good2),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    for (const message of [...good1, ...good2]) {
      expect(await storage.getMessage(message.principalId, message.ref)).not.toBeNull();
    }
    expect(await storage.getMessage(bad[0]!.principalId, bad[0]!.ref)).toBeNull();
    await storage.close();
  });

  it('commits an insert still waiting for its group when closed', async () => {
    const path = newPath();
    const storage = new SqliteStorage({ path });
    await storage.ready();
    const message = buildNewMessage();
    const inserted = storage.insertMessages([message]);
    await storage.close();
    await inserted;
    const reopened = new SqliteStorage({ path });
    expect(await reopened.getMessage(message.principalId, message.ref)).not.toBeNull();
    await reopened.close();
    await expect(storage.getMessage(message.principalId, message.ref)).rejects.toThrow(/closed/);
  });

  it('finds, after the upgrade, the parts submitted when every carrier id was in the side table', async () => {
    const path = newPath();
    const before = new SqliteStorage({ path });
    const message = buildNewMessage({ smsCount: 2, callbackUrl: 'https://client.example/dlr' });
    await before.insertMessages([message]);
    await before.recordSubmission(message.ref, 0, 'old-0', message.createdAt + 1);
    await before.close();
    // The file as a version without the row's own carrier id left it: the id in the side table only.
    const db = new Database(path);
    db.exec(`DROP INDEX sms_outbox_messages_carrier;
      INSERT INTO sms_outbox_carrier_ids (carrier_id, ref) SELECT carrier_id, ref FROM sms_outbox_messages WHERE carrier_id IS NOT NULL;
      ALTER TABLE sms_outbox_messages DROP COLUMN carrier_id;
      DELETE FROM sms_outbox_schema_version WHERE version = 3;`);
    db.close();

    const after = new SqliteStorage({ path });
    await after.recordSubmission(message.ref, 1, 'new-1', message.createdAt + 2);
    expect((await after.applyReceipt({ carrierIds: ['old-0'], outcome: outcome('delivered', 'delivered_to_terminal'), now: message.createdAt + 3 })).kind).toBe('part');
    const ended = await after.applyReceipt({ carrierIds: ['new-1'], outcome: outcome('delivered', 'delivered_to_terminal'), now: message.createdAt + 4 });
    expect(ended.kind).toBe('terminal');
    expect((await after.getMessage(message.principalId, message.ref))?.state).toBe('delivered');
    await after.close();
  });
});

describe('SqliteStorage records built without reading back', () => {
  it('returns from recordSubmission, applyReceipt, finish and claimMessages exactly what a read gives', async () => {
    const storage = new SqliteStorage({ path: newPath() });
    const [a, b] = [
      buildNewMessage({ smsCount: 2, callbackUrl: 'https://client.example/dlr' }),
      buildNewMessage({ smsCount: 1 }),
    ];
    await storage.insertMessages([a!, b!]);
    const read = (ref: string) => storage.getMessage(a!.principalId, ref);
    const t = a!.createdAt;
    const claimed = await storage.claimMessages({ owner: 'w', limit: 10, leaseMs: 1_000, now: t + 1 });
    for (const message of claimed) expect(message).toStrictEqual(await read(message.ref));

    await storage.recordSubmission(a!.ref, 1, 'c1', t + 2);
    const delivered = { state: 'delivered', reason: 'delivered_to_terminal', description: 'ok' } as const;
    await storage.applyReceipt({ carrierIds: ['c1'], outcome: delivered, now: t + 3 });
    const submitted = await storage.recordSubmission(a!.ref, 0, 'c0', t + 4);
    expect(submitted.kind).toBe('submitted');
    if (submitted.kind === 'submitted') expect(submitted.transition.message).toStrictEqual(await read(a!.ref));
    const terminal = await storage.applyReceipt({ carrierIds: ['c0'], outcome: delivered, now: t + 5 });
    expect(terminal.kind).toBe('terminal');
    if (terminal.kind === 'terminal') {
      expect(terminal.transition.message.callback?.state).toBe('pending');
      expect(terminal.transition.message).toStrictEqual(await read(a!.ref));
    }

    const failed = await storage.finish(b!.ref, { state: 'failed', reason: 'unknown', description: 'gave up' }, t + 6);
    expect(failed?.message).toStrictEqual(await read(b!.ref));
    await storage.close();
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';
import { MIGRATIONS } from '../../src/storage/sqlite/migrations.js';
import { buildNewMessage, runStorageContract } from '../../src/testing/storage-suite/index.js';

const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-sqlite-'));
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
    expect(normal.pragma('busy_timeout', { simple: true })).toBe(1234);
    expect(full.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    await a.close();
    await b.close();
    // The host's handles stay open: close() only closes what the adapter opened.
    expect(full.open).toBe(true);
    expect(full.prepare('SELECT count(*) AS n FROM sms_messages').get()).toEqual({ n: 0 });
    full.close();
    normal.close();
  });

  it('moves the parts of a database left by schema version 2 into their messages, and goes on from there', async () => {
    const path = newPath();
    const old = new Database(path);
    old.exec(MIGRATIONS[0]!);
    old.exec(MIGRATIONS[1]!);
    old.pragma('user_version = 2');
    const insert = old.prepare(`
      INSERT INTO sms_messages (id, ref, principal_id, endpoint, profile_code, sender, recipient, text, message_type,
        req_type, external_id, recipient_field, reference_field, sms_count, encoding, created_at, state,
        next_attempt_at, updated_at)
      VALUES (?, ?, 'p', 'quick', '12345', 'SENDER', '254700000001', 'hello', 1, 1, 'x', 'mobile', 'reference_number', ?,
        'gsm7', 1000, ?, 1000, 1000)`);
    insert.run(1, 'two-parts', 2, 'submitted');
    insert.run(2, 'queued-one', 1, 'queued');
    const part = old.prepare('INSERT INTO sms_parts VALUES (?, ?, ?, ?, ?, ?)');
    // Written out of index order: the migration orders them.
    part.run(1, 1, 'c1', null, null, null);
    part.run(1, 0, 'c0', 'delivered', 'delivered_to_terminal', 'Delivered "to handset"');
    part.run(2, 0, null, null, null, null);
    old.prepare('INSERT INTO sms_carrier_ids VALUES (?, ?, ?)').run('c0', 1, 0);
    old.prepare('INSERT INTO sms_carrier_ids VALUES (?, ?, ?)').run('c1', 1, 1);
    old.close();

    const storage = new SqliteStorage({ path });
    const twoParts = await storage.getMessage('p', 'two-parts');
    expect(twoParts?.parts).toEqual([
      { index: 0, carrierId: 'c0', outcome: { state: 'delivered', reason: 'delivered_to_terminal', description: 'Delivered "to handset"' } },
      { index: 1, carrierId: 'c1', outcome: null },
    ]);
    expect((await storage.getMessage('p', 'queued-one'))?.parts).toEqual([{ index: 0, carrierId: null, outcome: null }]);
    // The receipt of the last part finds it through the carrier-id index and ends the message.
    const result = await storage.applyReceipt({
      carrierIds: ['c1'],
      outcome: { state: 'delivered', reason: 'delivered_to_terminal', description: 'ok' },
      now: 2000,
    });
    expect(result.kind).toBe('terminal');
    expect((await storage.getMessage('p', 'two-parts'))?.state).toBe('delivered');
    await storage.close();
    const migrated = new Database(path);
    expect(migrated.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(migrated.prepare(`SELECT name FROM sqlite_master WHERE name = 'sms_parts'`).all()).toEqual([]);
    migrated.close();
  });

  it('writes a message without building a temporary b-tree; a version 3 database gets the new purge index and still purges', async () => {
    /** The opcodes SQLite would run for a write to a message row: they evaluate every partial index's predicate. */
    const temporaryTrees = (db: Database.Database) =>
      [
        `INSERT INTO sms_messages (ref, principal_id, endpoint, profile_code, sender, recipient, text, message_type, req_type,
          external_id, recipient_field, reference_field, sms_count, encoding, created_at, state, next_attempt_at, updated_at)
          VALUES ('r', 'p', 'quick', '12345', 'S', '254700000001', 't', 1, 1, 'x', 'mobile', 'reference_number', 1, 'gsm7', 1, 'queued', 1, 1)`,
        `UPDATE sms_messages SET state = 'delivered', updated_at = 2 WHERE id = 1`,
        `DELETE FROM sms_messages WHERE id = 1`,
      ].flatMap((sql) => (db.prepare(`EXPLAIN ${sql}`).all() as { opcode: string }[]).filter((op) => op.opcode === 'OpenEphemeral'));
    const path = newPath();
    const old = new Database(path);
    for (const migration of MIGRATIONS.slice(0, 3)) old.exec(migration);
    old.pragma('user_version = 3');
    // Version 3's purge index listed the five terminal states: SQLite built a b-tree of them at every write.
    expect(temporaryTrees(old).length).toBeGreaterThan(0);
    const insert = old.prepare(`
      INSERT INTO sms_messages (ref, principal_id, endpoint, profile_code, sender, recipient, text, message_type,
        req_type, external_id, recipient_field, reference_field, sms_count, encoding, created_at, state,
        next_attempt_at, updated_at, parts)
      VALUES (?, 'p', 'quick', '12345', 'SENDER', '254700000001', 'hello', 1, 1, 'x', 'mobile', 'reference_number', 1,
        'gsm7', 1000, ?, 1000, 1000, '[["c"]]')`);
    insert.run('old-delivered', 'delivered');
    insert.run('old-submitted', 'submitted');
    old.close();

    const storage = new SqliteStorage({ path });
    expect(await storage.purge(5_000, 10)).toBe(1);
    expect(await storage.getMessage('p', 'old-delivered')).toBeNull();
    expect((await storage.getMessage('p', 'old-submitted'))?.state).toBe('submitted');
    await storage.close();
    const migrated = new Database(path);
    expect(migrated.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(temporaryTrees(migrated)).toEqual([]);
    migrated.close();
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

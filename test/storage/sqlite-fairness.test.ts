/**
 * Fair queues on SQLite beyond the contract suite (which test/storage/sqlite.test.ts runs):
 * a database of the schema before (version 4) keeps its queued messages claimable, first, in
 * their old order, with their leases and due times; the queue table holds exactly the
 * queued messages whatever steps they go through, also when a write of a group commit
 * fails; and a claim and an insert's lookups read the queue in its order, not sorted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { NewMessage } from '../../src/storage/contract.js';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';
import { MIGRATIONS } from '../../src/storage/sqlite/migrations.js';
import { prepareStatements } from '../../src/storage/sqlite/statements.js';
import { buildNewMessage } from '../../src/testing/storage-suite/index.js';

const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-sqlite-fair-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileCounter = 0;
const newPath = (): string => join(dir, `db-${++fileCounter}.sqlite`);

const T0 = 1_700_000_000_000;
const LEASE = 30_000;
const DELIVERED = { state: 'delivered', reason: 'delivered_to_terminal', description: 'ok' } as const;

/** `count` messages of `principalId`, texts `<prefix><i>` (from 1). */
function messagesOf(principalId: string, count: number, overrides: Partial<NewMessage> = {}, prefix = principalId): NewMessage[] {
  return Array.from({ length: count }, (_, i) => buildNewMessage({ principalId, createdAt: T0, text: `${prefix}${i + 1}`, ...overrides }));
}

/** The ids of the queue's rows and of the `queued` messages, each sorted: they must be the same. */
function queueAndQueued(path: string): { queue: number[]; queued: number[] } {
  const db = new Database(path, { readonly: true });
  try {
    const ids = (sql: string) => (db.prepare(sql).pluck().all() as number[]).sort((a, b) => a - b);
    return {
      queue: ids('SELECT message_id FROM sms_queue'),
      queued: ids(`SELECT id FROM sms_messages WHERE state = 'queued'`),
    };
  } finally {
    db.close();
  }
}

describe('SqliteStorage fair queues: upgrade from schema version 4', () => {
  it('keeps the queued messages claimable, first and in their old order, with their leases and due times', async () => {
    const path = newPath();
    const old = new Database(path);
    for (const migration of MIGRATIONS.slice(0, 4)) old.exec(migration);
    old.pragma('user_version = 4');
    const insert = old.prepare(`
      INSERT INTO sms_messages (id, ref, principal_id, endpoint, profile_code, sender, recipient, text, message_type,
        req_type, external_id, recipient_field, reference_field, sms_count, encoding, created_at, state,
        next_attempt_at, lease_owner, lease_until, updated_at, parts)
      VALUES (?, ?, ?, 'quick', 'PROFILE1', 'SENDER', '254700000001', ?, 1, 1, 'x', 'recipient', 'external_id', 1,
        'GSM-7', ?, ?, ?, ?, ?, ?, ?)`);
    // id, ref, principal, text, created_at, state, next_attempt_at, lease owner, lease end, parts.
    const rows: [number, string, string, string, number, string, number, string | null, number | null, string][] = [
      [1, 'old-1', 'A', 'old A1', T0 + 1, 'queued', T0 + 1, null, null, '[[null]]'],
      [2, 'old-2', 'B', 'old B1', T0 + 2, 'queued', T0 + 2, null, null, '[[null]]'],
      [3, 'old-3', 'A', 'old A2', T0 + 3, 'submitted', T0 + 3, null, null, '[["c3"]]'],
      // Leased by an instance of the old version until T0 + LEASE.
      [4, 'old-4', 'A', 'old A3', T0 + 4, 'queued', T0 + 4, 'old-worker', T0 + LEASE, '[[null]]'],
      // Given back for a retry, due at T0 + 500.
      [5, 'old-5', 'B', 'old B2', T0 + 5, 'queued', T0 + 500, null, null, '[[null]]'],
      [6, 'old-6', 'A', 'old A4', T0 + 6, 'queued', T0 + 6, null, null, '[[null]]'],
      [7, 'old-7', 'B', 'old B3', T0 + 7, 'delivered', T0 + 7, null, null, '[["c7","delivered","delivered_to_terminal","ok"]]'],
    ];
    for (const [id, ref, principal, text, createdAt, state, due, owner, until, parts] of rows) {
      insert.run(id, ref, principal, text, createdAt, state, due, owner, until, createdAt, parts);
    }
    old.prepare('INSERT INTO sms_carrier_ids VALUES (?, ?, ?)').run('c3', 3, 0);
    old.close();

    const storage = new SqliteStorage({ path });
    // Stored after the upgrade: C (nothing queued before), and A again (after its old ones).
    await storage.insertMessages(messagesOf('C', 2, { createdAt: T0 + 10 }, 'new C'));
    await storage.insertMessages(messagesOf('A', 1, { createdAt: T0 + 11 }, 'new A'));
    const claim = async (limit: number, now: number) =>
      (await storage.claimMessages({ owner: 'w', limit, leaseMs: LEASE, now })).map((m) => `${m.text}/${m.priority}`);
    // The old queued ones first, in the order they were stored, passing the leased one and
    // the one not due yet; then the new ones in their turns.
    expect(await claim(2, T0 + 20)).toEqual(['old A1/bulk', 'old B1/bulk']);
    expect(await claim(10, T0 + 20)).toEqual(['old A4/bulk', 'new C1/bulk', 'new C2/bulk', 'new A1/bulk']);
    // Due, the retry comes back in its old place.
    expect(await claim(10, T0 + 500)).toEqual(['old B2/bulk']);
    // The old lease holds until it ends, then its message is claimed.
    expect(await claim(10, T0 + LEASE - 1)).toEqual([]);
    expect(await claim(10, T0 + LEASE)).toEqual(['old A3/bulk']);

    // The messages that were not queued stay as they were, with the default class.
    expect(await storage.getMessage('A', 'old-3')).toMatchObject({ state: 'submitted', priority: 'bulk' });
    expect(await storage.getMessage('B', 'old-7')).toMatchObject({ state: 'delivered', priority: 'bulk' });
    // Their steps go on: the submitted one ends with its receipt, a claimed one is submitted.
    expect((await storage.applyReceipt({ carrierIds: ['c3'], outcome: DELIVERED, now: T0 + LEASE + 1 })).kind).toBe('terminal');
    expect((await storage.recordSubmission('old-1', 0, 'c1', T0 + LEASE + 2)).kind).toBe('submitted');
    await storage.close();

    const migrated = new Database(path, { readonly: true });
    expect(migrated.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(migrated.prepare(`SELECT name FROM sqlite_master WHERE name = 'sms_messages_claim'`).all()).toEqual([]);
    // The leases left the message rows for the queue's.
    expect(migrated.prepare('SELECT count(*) FROM sms_messages WHERE lease_owner IS NOT NULL').pluck().get()).toBe(0);
    migrated.close();
    const { queue, queued } = queueAndQueued(path);
    expect(queue).toEqual(queued);
  });

  it('migrates a database of queued messages only once, when two instances open it together', async () => {
    const path = newPath();
    const old = new Database(path);
    for (const migration of MIGRATIONS.slice(0, 4)) old.exec(migration);
    old.pragma('user_version = 4');
    old.exec(`
      INSERT INTO sms_messages (ref, principal_id, endpoint, profile_code, sender, recipient, text, message_type,
        req_type, external_id, recipient_field, reference_field, sms_count, encoding, created_at, state,
        next_attempt_at, updated_at, parts)
      VALUES ('q', 'A', 'quick', 'PROFILE1', 'SENDER', '254700000001', 'queued', 1, 1, 'x', 'recipient', 'external_id', 1,
        'GSM-7', ${T0}, 'queued', ${T0}, ${T0}, '[[null]]')`);
    old.close();
    const a = new SqliteStorage({ path });
    const b = new SqliteStorage({ path });
    await Promise.all([a.ready(), b.ready()]);
    const claimed = await b.claimMessages({ owner: 'w', limit: 10, leaseMs: LEASE, now: T0 + 1 });
    expect(claimed.map((m) => m.ref)).toEqual(['q']);
    expect(await a.claimMessages({ owner: 'w', limit: 10, leaseMs: LEASE, now: T0 + 1 })).toEqual([]);
    await Promise.all([a.close(), b.close()]);
  });
});

describe('SqliteStorage fair queues: the queue table', () => {
  it('holds exactly the queued messages through every step that moves a message on', async () => {
    const path = newPath();
    const storage = new SqliteStorage({ path });
    const [a1, a2, a3, a4, a5] = messagesOf('A', 5, { callbackUrl: 'https://client.example/dlr' });
    const b = messagesOf('B', 3, { smsCount: 2, priority: 'transactional' });
    await storage.insertMessages([a1!, a2!, a3!, a4!, a5!]);
    await storage.insertMessages(b, { owner: 'accepting', until: T0 + LEASE });
    expect(queueAndQueued(path).queue).toHaveLength(8);

    await storage.claimMessages({ owner: 'w', limit: 5, leaseMs: LEASE, now: T0 + 1 });
    await storage.recordSubmission(a1!.ref, 0, 'a1', T0 + 2); // submitted
    await storage.finish(a2!.ref, { state: 'failed', reason: 'unknown', description: 'gave up' }, T0 + 3); // ended queued
    await storage.reschedule(a3!.ref, T0 + 1_000, 'busy', T0 + 4); // still queued, not due
    await storage.reschedule(a3!.ref, T0 + 2_000, 'busy again', T0 + 5); // given back twice without a claim
    await storage.recordSubmission(b[0]!.ref, 0, 'b0-0', T0 + 5); // one part of two: still queued
    await storage.reschedule(b[0]!.ref, T0 + 1_000, 'part 2 throttled', T0 + 5); // retrying
    // A receipt for its submitted part is kept; the message ends while it waits for its retry.
    await storage.applyReceipt({ carrierIds: ['b0-0'], outcome: { state: 'undelivered', reason: 'absent_subscriber', description: 'x' }, now: T0 + 6 });
    await storage.finish(b[0]!.ref, { state: 'failed', reason: 'unknown', description: 'cancelled' }, T0 + 6);
    // A receipt for a part of a queued message holds it; the other part's makes it terminal while queued.
    await storage.recordSubmission(b[1]!.ref, 1, 'b1-1', T0 + 7);
    await storage.applyReceipt({ carrierIds: ['b1-1'], outcome: DELIVERED, now: T0 + 8 });
    await storage.recordSubmission(b[1]!.ref, 0, 'b1-0', T0 + 9); // submitted
    await storage.applyReceipt({ carrierIds: ['b1-0'], outcome: DELIVERED, now: T0 + 10 }); // delivered
    await storage.expireOverdue(T0 + 100, 10, { state: 'expired', reason: 'expired', description: 'no receipt' }, T0 + 200);
    // A reschedule of a message no longer queued changes nothing.
    await storage.reschedule(a1!.ref, T0 + 1_000, 'late', T0 + 201);

    const { queue, queued } = queueAndQueued(path);
    expect(queue).toEqual(queued);
    expect(queued).toHaveLength(4); // a3, a4, a5, b2
    // What is left is claimed in its order once due and unleased: transactional first.
    const rest = await storage.claimMessages({ owner: 'w2', limit: 10, leaseMs: LEASE, now: T0 + 2 * LEASE });
    expect(rest.map((m) => m.text)).toEqual(['B3', 'A3', 'A4', 'A5']);
    expect(await storage.purge(T0 + 10 * LEASE, 100)).toBeGreaterThan(0);
    await storage.close();
    expect(queueAndQueued(path).queue).toEqual(queueAndQueued(path).queued);
  });

  it('keeps a backlog sent back for retries out of the way of claims and newcomers, and puts it back in its place when due', async () => {
    const db = new Database(':memory:');
    const storage = new SqliteStorage({ database: db });
    // A carrier outage: A's 500 were each claimed and given back, due again at T0 + 10,000.
    const a = messagesOf('A', 500);
    await storage.insertMessages(a);
    const claimed = await storage.claimMessages({ owner: 'w', limit: 500, leaseMs: LEASE, now: T0 + 1 });
    for (const m of claimed) await storage.reschedule(m.ref, T0 + 10_000, 'carrier down', T0 + 2);
    const retrying = () => db.prepare('SELECT retrying, count(*) AS n FROM sms_queue GROUP BY retrying').all();
    expect(retrying()).toEqual([{ retrying: 1, n: 500 }]);
    // Meanwhile B stores 2: nothing is claimable, so it starts at the largest tag queued
    // (A500's), behind A's backlog, which goes first once due.
    await storage.insertMessages(messagesOf('B', 2, { createdAt: T0 + 3 }));
    // C stores 1 while B1 is the head: right after it.
    await storage.insertMessages(messagesOf('C', 1, { createdAt: T0 + 4 }));
    const texts = async (now: number, limit = 10) =>
      (await storage.claimMessages({ owner: 'w', limit, leaseMs: LEASE, now })).map((m) => m.text);
    expect(await texts(T0 + 5)).toEqual(['B1', 'C1', 'B2']);
    expect(retrying()).toEqual([{ retrying: 0, n: 3 }, { retrying: 1, n: 500 }]);
    // Due, A's backlog is the head for a newcomer (D1 right after A1) before a claim wakes
    // it into its places, ahead of what came after it.
    await storage.insertMessages(messagesOf('D', 1, { createdAt: T0 + 10_000 }));
    expect(retrying()).toEqual([{ retrying: 0, n: 4 }, { retrying: 1, n: 500 }]);
    const order = await texts(T0 + 10_000, 1_000);
    expect(retrying()).toEqual([{ retrying: 0, n: 504 }]);
    expect(order.slice(0, 3)).toEqual(['A1', 'D1', 'A2']);
    expect(order).toHaveLength(501);
    await storage.close();
    db.close();
  });

  it('gives a request of several principals and classes one computation: each run its own turns', async () => {
    const storage = new SqliteStorage({ path: newPath() });
    await storage.insertMessages([
      ...messagesOf('A', 2),
      ...messagesOf('B', 1),
      ...messagesOf('A', 1, { priority: 'transactional' }, 'At'),
      ...messagesOf('B', 1, {}, 'b'),
    ]);
    // Bulk: A 1, 2; B from the same head (none queued: 0): 1, then its second run continues
    // after it: 2. Transactional: At1 alone.
    const claimed = await storage.claimMessages({ owner: 'w', limit: 10, leaseMs: LEASE, now: T0 + 1 });
    expect(claimed.map((m) => `${m.text}/${m.priority}`)).toEqual(['At1/transactional', 'A1/bulk', 'B1/bulk', 'A2/bulk', 'b1/bulk']);
    await storage.close();
  });

  it('stores nothing of a request whose write fails in a group, and gives the others their places', async () => {
    const path = newPath();
    const storage = new SqliteStorage({ path });
    const existing = buildNewMessage({ principalId: 'Z', createdAt: T0 });
    await storage.insertMessages([existing]);
    const a = messagesOf('A', 3);
    const bad = [...messagesOf('B', 2), buildNewMessage({ ref: existing.ref, principalId: 'B' })];
    const c = messagesOf('C', 2);
    const results = await Promise.allSettled([
      storage.insertMessages(a),
      storage.insertMessages(bad),
      storage.insertMessages(c),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const { queue, queued } = queueAndQueued(path);
    expect(queue).toEqual(queued);
    expect(queue).toHaveLength(6);
    const order = await storage.claimMessages({ owner: 'w', limit: 10, leaseMs: LEASE, now: T0 + 1 });
    // Z's message holds tag 1; A and C each start there, B stored nothing.
    expect(order.map((m) => m.text)).toEqual(['Hello', 'A1', 'C1', 'A2', 'C2', 'A3']);
    await storage.close();
  });

  it('claims and looks up the head and tails in the queue\'s order: no sort, and a principal\'s tail from its index', async () => {
    const db = new Database(':memory:');
    const storage = new SqliteStorage({ database: db });
    await storage.ready();
    const s = prepareStatements(db);
    const plan = (statement: { source: string }, params: unknown[]) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${statement.source}`).all(...params) as { detail: string }[]).map((r) => r.detail).join('; ');
    const named = { now: T0, limit: 256, rank: 1, principal: 'A' };
    for (const statement of [s.dueMessages, s.queuePlace]) {
      const detail = plan(statement, [named]);
      expect(detail).toMatch(/sms_queue/);
      expect(detail).not.toMatch(/TEMP B-TREE/);
    }
    expect(plan(s.queueTail, [named])).toMatch(/COVERING INDEX sms_queue_principal/);
    expect(plan(s.queuePlace, [named])).toMatch(/COVERING INDEX sms_queue_principal/);
    for (const statement of [s.leaseMessage, ...s.dequeue, ...s.requeue]) {
      expect(plan(statement, Array(statement.source.split('?').length - 1).fill(1))).toMatch(/USING PRIMARY KEY/);
    }
    await storage.close();
    db.close();
  });
});

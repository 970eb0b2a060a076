/**
 * Fair queues on SQLite beyond the contract suite (which test/storage/sqlite.test.ts runs):
 * a backlog given back for retries, several principals in one request, a request whose
 * write fails in a group commit; and the claims and the insert's lookups read the queue on
 * its (partial) indexes, not sorted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { NewMessage } from '../../src/storage/contract.js';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';
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

describe('SqliteStorage fair queues', () => {
  it('keeps a backlog sent back for retries out of the way of claims and newcomers, and puts it back in its place when due', async () => {
    const db = new Database(':memory:');
    const storage = new SqliteStorage({ database: db });
    // A carrier outage: A's 500 were each claimed and given back, due again at T0 + 10,000.
    const a = messagesOf('A', 500);
    await storage.insertMessages(a);
    const claimed = await storage.claimMessages({ owner: 'w', limit: 500, leaseMs: LEASE, now: T0 + 1 });
    for (const m of claimed) await storage.reschedule(m.ref, T0 + 10_000, 'carrier down', T0 + 2);
    // Meanwhile B stores 2: nothing is claimable, so it starts at the largest tag queued
    // (A500's), behind A's backlog, which goes first once due.
    await storage.insertMessages(messagesOf('B', 2, { createdAt: T0 + 3 }));
    // C stores 1 while B1 is the head: right after it.
    await storage.insertMessages(messagesOf('C', 1, { createdAt: T0 + 4 }));
    const texts = async (now: number, limit = 10) =>
      (await storage.claimMessages({ owner: 'w', limit, leaseMs: LEASE, now })).map((m) => m.text);
    expect(await texts(T0 + 5)).toEqual(['B1', 'C1', 'B2']);
    // Due, A's backlog is the head for a newcomer (D1 right after A1) before a claim wakes
    // it into its places, ahead of what came after it.
    await storage.insertMessages(messagesOf('D', 1, { createdAt: T0 + 10_000 }));
    const order = await texts(T0 + 10_000, 1_000);
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
    const order = await storage.claimMessages({ owner: 'w', limit: 10, leaseMs: LEASE, now: T0 + 1 });
    // Z's message holds tag 1; A and C each start there, B stored nothing.
    expect(order.map((m) => m.text)).toEqual(['Hello', 'A1', 'C1', 'A2', 'C2', 'A3']);
    await storage.close();
  });

  it('claims and finds the queue\'s ends on its indexes, without sorting: the partial indexes serve every query of them', async () => {
    const db = new Database(':memory:');
    const storage = new SqliteStorage({ database: db });
    await storage.ready();
    const m = 'sms_outbox_messages';
    const plan = (sql: string) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array(sql.split('?').length - 1).fill(1)) as { detail: string }[]).map((r) => r.detail).join('; ');
    const claimable = 'due_at <= ? AND (lease_until IS NULL OR lease_until <= ?) AND (valid_until IS NULL OR valid_until > ?)';
    const queries: [string, RegExp][] = [
      [`SELECT seq FROM ${m} WHERE queue IS NOT NULL AND ${claimable} ORDER BY queue, order_key, seq LIMIT ?`, /sms_outbox_messages_claim/],
      [`SELECT order_key FROM ${m} WHERE queue = ? AND ${claimable} ORDER BY order_key, seq LIMIT 1`, /sms_outbox_messages_claim/],
      [`SELECT MAX(order_key) FROM ${m} WHERE queue = ? AND principal_id = ?`, /sms_outbox_messages_principal_queue/],
      [`SELECT seq FROM ${m} WHERE report_due_at <= ? ORDER BY report_due_at, order_key, seq LIMIT ?`, /sms_outbox_messages_report/],
      [`SELECT seq FROM ${m} WHERE timer = ? AND timer_at <= ? ORDER BY timer_at, seq LIMIT ?`, /sms_outbox_messages_timer/],
      [`SELECT MIN(accepted_at) FROM ${m} WHERE queue = ?`, /sms_outbox_messages_accepted/],
    ];
    for (const [sql, index] of queries) {
      const detail = plan(sql);
      expect(detail, sql).toMatch(index);
      expect(detail, sql).not.toMatch(/TEMP B-TREE/);
    }
    await storage.close();
    db.close();
  });
});

/**
 * The SQLite client's group commit (storage/sqlite/client.ts): the writes of one turn share
 * one commit and resolve only after it; a failing transaction is undone alone; another
 * connection's lock is waited for without blocking the process, up to the busy timeout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteClient } from '../../src/storage/sqlite/client.js';

const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-group-commit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let counter = 0;
let db: Database.Database;
let client: SqliteClient;

beforeEach(() => {
  db = new Database(join(dir, `db-${++counter}.sqlite`));
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 0');
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
  client = new SqliteClient(db, () => Promise.resolve(), 200);
  client.opened();
});
afterEach(() => db.close());

const insert = (k: string, v: number) => client.run('INSERT INTO t (k, v) VALUES (?, ?)', [k, v]);
const rows = () => db.prepare('SELECT k, v FROM t ORDER BY k').all();
/** What another connection sees: only committed rows. */
const committed = () => {
  const other = new Database(db.name, { readonly: true });
  try {
    return other.prepare('SELECT count(*) AS n FROM t').pluck().get();
  } finally {
    other.close();
  }
};

describe('SqliteClient group commit', () => {
  it('commits every write of one turn together, each resolved after the commit with its own result', async () => {
    const frames = () => (db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]!.log;
    frames();
    const writes = [insert('a', 1), insert('b', 2), client.transaction(async (tx) => (await tx.run('INSERT INTO t (k, v) VALUES (?, ?)', ['c', 3])).affected)];
    let resolvedEarly = false;
    void Promise.race(writes).then(() => (resolvedEarly = committed() !== 3));
    expect(committed()).toBe(0);
    const results = await Promise.all(writes);
    expect(resolvedEarly).toBe(false);
    expect(results.map((r) => (typeof r === 'number' ? r : r.affected))).toEqual([1, 1, 1]);
    expect(committed()).toBe(3);
    // One commit: the pages of one transaction, not of three.
    expect(frames()).toBeLessThanOrEqual(3);
  });

  it('fails only the transaction that throws; the others of its group are kept', async () => {
    const settled = await Promise.allSettled([
      insert('a', 1),
      client.transaction(async (tx) => {
        // Two statements, the second failing: the first must be undone with it.
        await tx.run('INSERT INTO t (k, v) VALUES (?, ?)', ['half', 9]);
        return tx.run('INSERT INTO t (k, v) VALUES (?, ?)', ['a', 2]);
      }),
      insert('b', 2),
      insert('a', 5),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect(String((settled[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/);
    expect(rows()).toEqual([{ k: 'a', v: 1 }, { k: 'b', v: 2 }]);
  });

  it('runs transactions one at a time: a write asked for during one waits for it', async () => {
    const order: string[] = [];
    await Promise.all([
      client.transaction(async (tx) => {
        order.push('first begins');
        await tx.run('INSERT INTO t (k, v) VALUES (?, ?)', ['x', 1]);
        await Promise.resolve();
        order.push('first ends');
      }),
      insert('y', 2).then(() => order.push('write done')),
      client.transaction(async () => void order.push('second')),
    ]);
    expect(order.slice(0, 3)).toEqual(['first begins', 'first ends', 'second']);
    expect(rows()).toHaveLength(2);
  });

  it('waits for another connection\'s lock without blocking the process, then writes', async () => {
    const other = new Database(db.name);
    other.prepare('BEGIN IMMEDIATE').run();
    const write = insert('a', 1);
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 5);
    await new Promise((resolve) => setTimeout(resolve, 50));
    other.prepare('ROLLBACK').run();
    other.close();
    await write;
    clearInterval(ticking);
    expect(ticks).toBeGreaterThan(3);
    expect(rows()).toEqual([{ k: 'a', v: 1 }]);
  });

  it('rejects the writes that waited the busy timeout for a lock, and keeps none', async () => {
    const other = new Database(db.name);
    other.prepare('BEGIN IMMEDIATE').run();
    try {
      const settled = await Promise.allSettled([insert('a', 1), insert('b', 2)]);
      expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    } finally {
      other.prepare('ROLLBACK').run();
      other.close();
    }
    expect(rows()).toEqual([]);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/storage/sqlite/group-commit.js';

const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-group-commit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let counter = 0;
let db: Database.Database;
let commits: GroupCommit;

beforeEach(() => {
  db = new Database(join(dir, `db-${++counter}.sqlite`));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
  commits = new GroupCommit(db);
});
afterEach(() => db.close());

const insert = (k: string, v: number) => () => db.prepare('INSERT INTO t (k, v) VALUES (?, ?)').run(k, v).changes;
const rows = () => db.prepare('SELECT k, v FROM t ORDER BY k').all();

describe('GroupCommit', () => {
  it('commits every write of one turn together and resolves each with its own result', async () => {
    const results = await Promise.all([commits.run(insert('a', 1)), commits.run(insert('b', 2)), commits.run(() => 'plain')]);
    expect(results).toEqual([1, 1, 'plain']);
    expect(rows()).toEqual([{ k: 'a', v: 1 }, { k: 'b', v: 2 }]);
  });

  it('fails only the write that throws; the others of its group are kept', async () => {
    const settled = await Promise.allSettled([
      commits.run(insert('a', 1)),
      commits.run(() => {
        // Two statements, the second failing: the first must be undone with it.
        db.prepare('INSERT INTO t (k, v) VALUES (?, ?)').run('half', 9);
        return db.prepare('INSERT INTO t (k, v) VALUES (?, ?)').run('a', 2).changes;
      }),
      commits.run(insert('b', 2)),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((settled[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/);
    expect(rows()).toEqual([{ k: 'a', v: 1 }, { k: 'b', v: 2 }]);
  });

  it('a write that depends on an earlier failing one of the group sees the same state as alone', async () => {
    const settled = await Promise.allSettled([
      commits.run(() => {
        throw new Error('boom');
      }),
      commits.run(insert('a', 1)),
      commits.run(() => (db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n),
    ]);
    expect(settled[0]).toMatchObject({ status: 'rejected', reason: new Error('boom') });
    expect(settled[1]).toEqual({ status: 'fulfilled', value: 1 });
    expect(settled[2]).toEqual({ status: 'fulfilled', value: 1 });
    expect(rows()).toEqual([{ k: 'a', v: 1 }]);
  });

  it('rejects every write of the group when the transaction cannot start, and keeps none', async () => {
    const other = new Database(db.name);
    other.pragma('busy_timeout = 0');
    db.pragma('busy_timeout = 0');
    other.prepare('BEGIN IMMEDIATE').run();
    try {
      const settled = await Promise.allSettled([commits.run(insert('a', 1)), commits.run(insert('b', 2))]);
      expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    } finally {
      other.prepare('ROLLBACK').run();
      other.close();
    }
    expect(rows()).toEqual([]);
  });
});

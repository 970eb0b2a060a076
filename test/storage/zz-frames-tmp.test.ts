import Database from 'better-sqlite3';
import { it } from 'vitest';
import { SqliteStorage } from '/work/main/src/storage/sqlite.js';
import { buildNewMessage } from '/work/main/src/testing/storage-suite.js';
it('x', async () => {
  const db = new Database('/tmp/frames.sqlite'); const s = new SqliteStorage({ database: db }); await s.ready();
  const f = () => (db.pragma('wal_checkpoint(PASSIVE)') as any)[0].log;
  f();
  await Promise.all(Array.from({ length: 100 }, () => s.insertMessages([buildNewMessage()])));
  const g = f();
  for (let i = 0; i < 100; i++) await s.insertMessages([buildNewMessage()]);
  console.log('grouped', g, 'seq', f());
  let t = Date.now();
  for (let i = 0; i < 200; i++) await s.insertMessages([buildNewMessage()]);
  console.log('seq 200 ms', Date.now() - t);
  t = Date.now();
  await Promise.all(Array.from({ length: 2000 }, () => s.insertMessages([buildNewMessage()])));
  console.log('concurrent 2000 ms', Date.now() - t);
});

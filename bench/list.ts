/**
 * `npx tsx bench/list.ts sqlite|postgres`: what one page of the message list costs with
 * 1,000,000 messages stored (`Storage.listMessages`, the read behind `GET {base}/messages`).
 *
 * The table is filled by one SQL statement that copies a message stored through the storage
 * a million times over (a series of numbers, not a million inserts), so the fill takes
 * seconds, bounded by the database's own insert speed: 900,000 messages of one key and
 * 100,000 over 100 others; 1 in 100 `failed`, the rest `delivered`; 50,000 recipients; two
 * profiles. Only the indexed columns differ between the copies (the record in `data` is the
 * seed's), which is all a page reads its way by. Then pages of 100 of the big key, 30 timed
 * after 3, median and p90 of each: the newest page, a page from a cursor in the middle, the
 * rare state, two states merged, one recipient, and a one-hour window. Target: every median
 * under 50 ms.
 *
 * The human lines go to stderr; the last line on stdout is one JSON object with the
 * figures (`npm run bench` reads it: cases `list-sqlite`, `list-postgres`). PostgreSQL on
 * 127.0.0.1 (PGPORT, PGUSER, PGDATABASE as the tests use them); the schema or file it makes
 * is removed at the end. Under a minute on SQLite, about two on PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { MessageListQuery, Storage } from '../src/storage/contract.js';
import { PostgresStorage } from '../src/storage/postgres/adapter.js';
import { TABLE_PREFIX } from '../src/storage/postgres/store.js';
import { SqliteStorage } from '../src/storage/sqlite/adapter.js';
import { buildNewMessage } from '../src/testing/storage-suite/index.js';

/** Messages stored. */
const TOTAL = 1_000_000;
/** Of which the big key's (the rest over 100 keys). */
const BIG = 900_000;
/** When the first copy was accepted; each next one a millisecond later. */
const BASE = 1_700_000_000_000;
const PAGE = 100;

const engine = process.argv[2];
if (engine !== 'sqlite' && engine !== 'postgres') throw new Error('usage: bench/list.ts sqlite|postgres');
const say = (line: string): void => console.error(line);

/** The SELECT list of a copy numbered `i` (an SQL expression) of the seed row `s`, in the order of `columns`. */
function copyColumns(i: string, text: (expression: string) => string): { columns: string; values: string } {
  const columns = ['ref', 'version', 'principal_id', 'external_id', 'created_at', 'valid_until', 'accepted_at', 'queue', 'order_key', 'due_at',
    'lease_owner', 'lease_until', 'report_due_at', 'timer', 'timer_at', 'recipient', 'state', 'profile_code', 'data'];
  const values = [
    `'bench-' || ${text(i)}`, '1',
    `CASE WHEN ${i} < ${BIG} THEN 'big' ELSE 'k' || ${text(`${i} % 100`)} END`,
    `'ext-' || ${text(`${i} % 1000`)}`,
    `${BASE} + ${i}`, 'NULL', `${BASE} + ${i}`, 'NULL', '0', `${BASE} + ${i}`,
    'NULL', 'NULL', 'NULL', 'NULL', 'NULL',
    `'2547' || ${text(`10000000 + ${i} % 50000`)}`,
    `CASE WHEN ${i} % 100 = 7 THEN 'failed' ELSE 'delivered' END`,
    `CASE WHEN ${i} % 2 = 0 THEN 'P1' ELSE 'P2' END`,
    's.data',
  ];
  return { columns: columns.join(', '), values: values.join(', ') };
}

/** A SQLite storage of {@link TOTAL} messages, and its cleanup. */
async function sqliteStorage(): Promise<{ storage: Storage; cleanup: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-bench-list-'));
  const path = join(dir, 'list.db');
  const seeding = new SqliteStorage({ path });
  await seeding.insertMessages([buildNewMessage({ principalId: 'seed', createdAt: 1 })]);
  await seeding.close();
  const db = new Database(path);
  // A bench file: no journal and no sync while it is filled, and the indexes in memory.
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -524288');
  const copy = copyColumns('n.i', (e) => `CAST(${e} AS TEXT)`);
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${TOTAL - 1})
    INSERT INTO sms_outbox_messages (${copy.columns})
    SELECT ${copy.values} FROM n, (SELECT data FROM sms_outbox_messages WHERE principal_id = 'seed') AS s`);
  db.exec('ANALYZE');
  db.close();
  const storage = new SqliteStorage({ path });
  return {
    storage,
    cleanup: async () => {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A PostgreSQL storage of {@link TOTAL} messages in a fresh schema, and its cleanup. */
async function postgresStorage(): Promise<{ storage: Storage; cleanup: () => Promise<void> }> {
  const pool = new pg.Pool({ host: '127.0.0.1', port: Number(process.env.PGPORT ?? 5432), user: process.env.PGUSER ?? 'postgres', database: process.env.PGDATABASE ?? 'test', max: 4 });
  const schema = `bench_list_${randomBytes(4).toString('hex')}`;
  const storage = new PostgresStorage({ pool, schema });
  await storage.insertMessages([buildNewMessage({ principalId: 'seed', createdAt: 1 })]);
  const table = `"${schema}"."${TABLE_PREFIX}messages"`;
  const copy = copyColumns('n.i', (e) => `(${e})::text`);
  await pool.query(`INSERT INTO ${table} (${copy.columns})
    SELECT ${copy.values} FROM generate_series(0, ${TOTAL - 1}) AS n(i), (SELECT data FROM ${table} WHERE principal_id = 'seed') AS s`);
  await pool.query(`VACUUM ANALYZE ${table}`); // as autovacuum would, in time
  return {
    storage,
    cleanup: async () => {
      await storage.close?.();
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

/** The pages timed, each a query of the big key. */
const PAGES: { name: string; query: Omit<MessageListQuery, 'principalId' | 'limit'> }[] = [
  { name: 'newest', query: {} },
  { name: 'from a cursor halfway', query: { after: { createdAt: BASE + BIG / 2, seq: Number.MAX_SAFE_INTEGER } } },
  { name: 'state=failed (1 in 100)', query: { states: ['failed'] } },
  { name: 'state=failed,delivered', query: { states: ['failed', 'delivered'] } },
  { name: 'one recipient', query: { recipient: `2547${10000000 + 12_345}` } },
  { name: 'profile and a one-hour window', query: { profileCode: 'P2', since: BASE + 400_000, until: BASE + 400_000 + 3_600_000 } },
];

const fillStarted = performance.now();
const { storage, cleanup } = engine === 'sqlite' ? await sqliteStorage() : await postgresStorage();
const fillSeconds = (performance.now() - fillStarted) / 1_000;
say(`${engine}: ${TOTAL.toLocaleString('en-US')} messages stored in ${fillSeconds.toFixed(1)} s`);
try {
  const figures: { name: string; medianMs: number; p90Ms: number; messages: number }[] = [];
  for (const page of PAGES) {
    const times: number[] = [];
    let messages = 0;
    for (let i = 0; i < 33; i++) {
      const started = performance.now();
      const answer = await storage.listMessages!({ principalId: 'big', limit: PAGE, ...page.query });
      const ms = performance.now() - started;
      messages = answer.messages.length;
      if (i >= 3) times.push(ms);
    }
    times.sort((a, b) => a - b);
    const figure = { name: page.name, medianMs: times[Math.floor(times.length / 2)]!, p90Ms: times[Math.floor(times.length * 0.9)]!, messages };
    figures.push(figure);
    say(`  ${page.name}: median ${figure.medianMs.toFixed(2)} ms, p90 ${figure.p90Ms.toFixed(2)} ms (${messages} messages)`);
  }
  const worst = figures.reduce((a, b) => (b.medianMs > a.medianMs ? b : a));
  say(`  slowest median: ${worst.name}, ${worst.medianMs.toFixed(2)} ms (target < 50 ms)`);
  console.log(JSON.stringify({ storage: engine, stored: TOTAL, fillSeconds: Number(fillSeconds.toFixed(1)), pageSize: PAGE, pages: figures, worstMedianMs: worst.medianMs }));
} finally {
  await cleanup();
}

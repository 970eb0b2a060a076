/**
 * `npx tsx bench/claim-postgres.ts`: what fair queues cost the PostgreSQL storage.
 *
 * Claims: the time of one claim of 256 with 1,000,000 messages queued over 1,000
 * principals, and over 1 principal (target: at most 2x): the whole claim (select, lease,
 * read the records), and its selection alone (the claim's locking read, in a transaction
 * rolled back). Each claimed batch is then taken out of the submit queue, untimed, as the
 * worker's submissions would; 30 claims, median and p90. Before the claims, `countQueued`
 * with that backlog queued, for everyone and for one principal (median of 10).
 *
 * The human lines go to stderr; the last line on stdout is one JSON object with the
 * figures (`npm run bench` reads it: case `claim-postgres`; `--claims-only` is accepted, and
 * is all it does).
 *
 * PostgreSQL on 127.0.0.1 only (PGPORT, PGUSER, PGDATABASE as the tests use them); every
 * schema it makes is dropped at the end. About two minutes.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { NewMessage } from '../src/storage/contract.js';
import { PostgresStorage } from '../src/storage/postgres/adapter.js';
import { TABLE_PREFIX } from '../src/storage/postgres/store.js';
import { buildNewMessage } from '../src/testing/storage-suite/index.js';

const pool = new pg.Pool({
  host: '127.0.0.1',
  port: Number(process.env.PGPORT ?? 5432),
  user: process.env.PGUSER ?? 'postgres',
  database: process.env.PGDATABASE ?? 'test',
  max: 8,
});
const schemas: string[] = [];

function freshSchema(): string {
  const schema = `bench_claim_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  return schema;
}

function messages(principalId: string, count: number, createdAt: number): NewMessage[] {
  return Array.from({ length: count }, () => buildNewMessage({ principalId, createdAt }));
}

/** The messages table of `schema`, quoted. */
function messagesTable(schema: string): string {
  return `"${schema}"."${TABLE_PREFIX}messages"`;
}

/** A storage with 1,000,000 messages queued, `principals` principals taking turns storing 1,000 at a time. */
async function backlog(principals: number): Promise<{ storage: PostgresStorage; schema: string }> {
  const schema = freshSchema();
  const storage = new PostgresStorage({ pool, schema });
  const requests = Array.from({ length: 1_000 }, (_, i) => `p${i % principals}`);
  for (let i = 0; i < requests.length; i += 8) {
    await Promise.all(requests.slice(i, i + 8).map((principal) => storage.insertMessages(messages(principal, 1_000, 1_000))));
  }
  await pool.query(`ANALYZE ${messagesTable(schema)}`); // as autovacuum would, in time
  return { storage, schema };
}

interface ClaimTimes {
  /** A whole claim (`claimMessages`): median and p90, ms. */
  median: number;
  p90: number;
  /** The selection alone (the claim's locking read, rolled back): median, ms. */
  selection: number;
  /** Principals in one claim. */
  principals: number;
}

/** 30 claims of 256 (after 3 untimed), and the selection of each alone before it. */
async function claimTimes(storage: PostgresStorage, schema: string): Promise<ClaimTimes> {
  const times: number[] = [];
  const selections: number[] = [];
  let principals = 0;
  const client = await pool.connect();
  try {
    for (let i = 0; i < 33; i++) {
      await client.query('BEGIN');
      let started = performance.now();
      await client.query(
        `SELECT seq FROM ${messagesTable(schema)} WHERE queue IS NOT NULL AND due_at <= 2000 AND (lease_until IS NULL OR lease_until <= 2000)
          AND (valid_until IS NULL OR valid_until > 2000) ORDER BY queue, order_key, seq LIMIT 256 FOR UPDATE SKIP LOCKED`,
      );
      if (i >= 3) selections.push(performance.now() - started);
      await client.query('ROLLBACK');
      started = performance.now();
      const claimed = await storage.claimMessages({ owner: 'bench', limit: 256, leaseMs: 600_000, now: 2_000 });
      if (i >= 3) times.push(performance.now() - started);
      if (i === 3) principals = new Set(claimed.map((m) => m.principalId)).size;
      const refs = claimed.map((m) => m.ref);
      await pool.query(`UPDATE ${messagesTable(schema)} SET queue = NULL, lease_owner = NULL, lease_until = NULL WHERE ref = ANY($1)`, [refs]);
    }
  } finally {
    client.release();
  }
  const at = (values: number[], q: number): number => values.sort((a, b) => a - b)[Math.floor(values.length * q)]!;
  return { median: at(times, 0.5), p90: at(times, 0.9), selection: at(selections, 0.5), principals };
}

/** `countQueued` with the backlog queued, for everyone and for principal p0: median of 10 (after 2 untimed), ms. */
async function countTimes(storage: PostgresStorage): Promise<{ all: number; one: number }> {
  const median = async (count: () => Promise<unknown>): Promise<number> => {
    const times: number[] = [];
    for (let i = 0; i < 12; i++) {
      const started = performance.now();
      await count();
      if (i >= 2) times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b)[5]!;
  };
  return { all: await median(() => storage.countQueued()), one: await median(() => storage.countQueued('p0')) };
}

const ms = (value: number): string => `${value.toFixed(2)} ms`;
const say = (line: string): void => console.error(line);

try {
  // The earlier adapter's figures had an insert comparison here; inserts are measured by the store-postgres-100 case.
  const inserts: never[] = [];
  say('Claims of 256 with 1,000,000 queued');
  const results: Record<string, ClaimTimes> = {};
  const counts: Record<number, { all: number; one: number }> = {};
  for (const principals of [1_000, 1]) {
    const loading = performance.now();
    const { storage, schema } = await backlog(principals);
    const loaded = (performance.now() - loading) / 1_000;
    counts[principals] = await countTimes(storage);
    results[principals] = await claimTimes(storage, schema);
    const { median, p90, selection, principals: seen } = results[principals]!;
    say(
      `  over ${principals} principal(s): median ${ms(median)}, p90 ${ms(p90)}; the selection alone ${ms(selection)}` +
        ` (a claim took ${seen} principals; loaded at ${Math.round(1e6 / loaded)} msg/s)`,
    );
    say(`    countQueued: everyone ${ms(counts[principals]!.all)}, one principal ${ms(counts[principals]!.one)} (median of 10)`);
    await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
  }
  const ratio = (key: 'median' | 'selection'): number => results[1_000]![key] / results[1]![key];
  say(`  1,000 principals against 1: claim ${ratio('median').toFixed(2)}x, selection ${ratio('selection').toFixed(2)}x (target <= 2x)`);
  const side = (keys: number) => ({
    keys,
    medianMs: results[keys]!.median,
    p90Ms: results[keys]!.p90,
    selectionMedianMs: results[keys]!.selection,
    keysPerClaim: results[keys]!.principals,
    countQueuedAllMs: counts[keys]!.all,
    countQueuedOneMs: counts[keys]!.one,
  });
  console.log(
    JSON.stringify({
      storage: 'postgres',
      claims: 30,
      manyKeys: side(1_000),
      oneKey: side(1),
      ratio: Number(ratio('median').toFixed(3)),
      selectionRatio: Number(ratio('selection').toFixed(3)),
      inserts,
    }),
  );
} finally {
  for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
}

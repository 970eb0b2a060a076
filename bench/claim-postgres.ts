/**
 * `npx tsx bench/claim-postgres.ts`: what fair queues cost the PostgreSQL storage.
 *
 * 1. Inserts: 100-message requests of one principal, 16 requesters at once for 4 s, stored
 *    by `PostgresStorage` (schema 5: fair tags computed in the insert, two indexes) against
 *    the insert of schema 4 (the statement before fair queues, through the same batcher,
 *    on a schema migrated to version 4), alternated, two rounds each; messages per second.
 * 2. Claims: the time of one claim of 256 with 1,000,000 messages queued over 1,000
 *    principals, and over 1 principal (target: at most 2x): the whole claim (select, lease,
 *    read the records), and its selection alone (`due_messages`, in a transaction rolled
 *    back). Each claimed batch is then marked submitted, untimed, as the worker would; 30
 *    claims, median and p90. Before the claims, `countQueued` with that backlog queued, for
 *    everyone and for one principal (median of 10).
 *
 * The human lines go to stderr; the last line on stdout is one JSON object with the
 * figures (`npm run bench` reads it: case `claim-postgres`). `--claims-only` skips part 1.
 *
 * PostgreSQL on 127.0.0.1 only (PGPORT, PGUSER, PGDATABASE as the tests use them); every
 * schema it makes is dropped at the end. About two minutes (a little less without part 1).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { NewMessage } from '../src/storage/contract.js';
import { PostgresStorage } from '../src/storage/postgres/adapter.js';
import { migrations } from '../src/storage/postgres/migrations.js';
import { storedName } from '../src/storage/postgres/names.js';
import { insertParams, type InsertRows } from '../src/storage/postgres/rows.js';
import { buildNewMessage } from '../src/testing/storage-suite/index.js';
import { Batcher } from '../src/util/batcher.js';

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

/** The insert of schema 4, the last before fair queues: its 20 columns, no tags. */
function schema4Insert(s: string): string {
  return `INSERT INTO ${s}.messages (ref, principal_id, endpoint, profile_code, sender, recipient, text, message_type,
      req_type, external_id, recipient_field, reference_field, sms_count, encoding, callback_url, callback_secret,
      created_at, state, attempts, next_attempt_at, lease_owner, lease_until, updated_at, parts)
    SELECT ref, principal_id, endpoint, profile_code, sender, recipient, text, message_type, req_type, external_id,
      recipient_field, reference_field, sms_count, encoding, callback_url, callback_secret, created_at, 'queued', 0,
      created_at, lease_owner, lease_until, created_at, parts
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int4[],
      $9::int4[], $10::text[], $11::text[], $12::text[], $13::int4[], $14::text[], $15::text[], $16::text[], $17::int8[],
      $18::text[], $19::int8[], $20::jsonb[]) WITH ORDINALITY
      AS t(ref, principal_id, endpoint, profile_code, sender, recipient, text, message_type, req_type, external_id,
        recipient_field, reference_field, sms_count, encoding, callback_url, callback_secret, created_at, lease_owner,
        lease_until, parts, ord)
    ORDER BY ord`;
}

/** An insert as schema 4's storage did it: a fresh schema at version 4, its statement, the same batching. */
async function schema4Inserter(): Promise<(batch: NewMessage[]) => Promise<void>> {
  const s = `"${freshSchema()}"`;
  await pool.query(`CREATE SCHEMA ${s}`);
  for (const migration of migrations(s).filter((m) => m.version <= 4)) {
    for (const statement of migration.statements) await pool.query(statement);
  }
  const sql = schema4Insert(s);
  const write = async (calls: readonly InsertRows[]): Promise<void> => {
    await pool.query(sql, insertParams(calls).slice(0, 20));
  };
  const batcher = new Batcher<InsertRows, void>({
    maxBatch: 100,
    maxInFlight: 3,
    runOne: (call) => write([call]),
    runBatch: async (calls) => (await write(calls), calls.map(() => undefined)),
  });
  return (batch) => batcher.call({ messages: batch, owner: null, until: null });
}

/** Messages per second stored by 16 requesters of 100-message requests of one principal for `ms`. */
async function insertRate(insert: (batch: NewMessage[]) => Promise<void>, ms = 4_000): Promise<number> {
  await insert(messages('A', 100, Date.now())); // the schema made, the first plan cached
  let stored = 0;
  const end = Date.now() + ms;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (Date.now() < end) {
        await insert(messages('A', 100, Date.now()));
        stored += 100;
      }
    }),
  );
  return stored / ((performance.now() - started) / 1_000);
}

/** A storage with 1,000,000 messages queued, `principals` principals taking turns storing 1,000 at a time. */
async function backlog(principals: number): Promise<{ storage: PostgresStorage; schema: string }> {
  const schema = freshSchema();
  const storage = new PostgresStorage({ pool, schema });
  const requests = Array.from({ length: 1_000 }, (_, i) => `p${i % principals}`);
  for (let i = 0; i < requests.length; i += 8) {
    await Promise.all(requests.slice(i, i + 8).map((principal) => storage.insertMessages(messages(principal, 1_000, 1_000))));
  }
  await pool.query(`ANALYZE "${schema}".messages`); // as autovacuum would, in time
  return { storage, schema };
}

interface ClaimTimes {
  /** A whole claim (`claimMessages`): median and p90, ms. */
  median: number;
  p90: number;
  /** The selection alone (`due_messages`, rolled back): median, ms. */
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
      await client.query(`SELECT count(*) FROM "${schema}".${storedName('due_messages')}(2000, 256)`);
      if (i >= 3) selections.push(performance.now() - started);
      await client.query('ROLLBACK');
      started = performance.now();
      const claimed = await storage.claimMessages({ owner: 'bench', limit: 256, leaseMs: 600_000, now: 2_000 });
      if (i >= 3) times.push(performance.now() - started);
      if (i === 3) principals = new Set(claimed.map((m) => m.principalId)).size;
      const refs = claimed.map((m) => m.ref);
      await pool.query(`UPDATE "${schema}".messages SET state = 'submitted', lease_owner = NULL, lease_until = NULL WHERE ref = ANY($1)`, [refs]);
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
const claimsOnly = process.argv.includes('--claims-only');
const say = (line: string): void => console.error(line);

try {
  const inserts: { round: number; schema4PerSec: number; fairPerSec: number }[] = [];
  if (!claimsOnly) {
    say('Inserts: one principal, 100-message requests, 16 at once, 4 s each');
    for (let round = 1; round <= 2; round++) {
      const before = await insertRate(await schema4Inserter());
      const storage = new PostgresStorage({ pool, schema: freshSchema() });
      const after = await insertRate((batch) => storage.insertMessages(batch));
      inserts.push({ round, schema4PerSec: Math.round(before), fairPerSec: Math.round(after) });
      say(`  round ${round}: schema 4 ${Math.round(before)} msg/s, fair tags ${Math.round(after)} msg/s (${(after / before).toFixed(2)}x)`);
    }
  }

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

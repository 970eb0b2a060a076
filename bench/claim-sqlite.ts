/**
 * `npx tsx bench/claim-sqlite.ts`: what fair queues cost the SQLite storage.
 *
 * 1. Inserts: 1-message and 100-message requests, 8 requesters at once, 2,000 messages a
 *    round, stored by `SqliteStorage`, 20 rounds; one principal, and requests rotating over
 *    1,000 principals. The process's CPU microseconds per message
 *    (user + system: the insert's cost whatever else the machine runs), `synchronous` NORMAL.
 * 2. Claims: the time of one claim of 256 with 1,000,000 messages queued over 1,000
 *    principals, and over 1 principal (target: at most 2x), `synchronous` FULL (the
 *    default), wall time. The two backlogs are claimed from in turn, so that a busy machine
 *    slows both alike; each claimed batch is then submitted, untimed, as the worker would.
 *    30 claims each after 3, median and p90.
 *
 * The human lines go to stderr; the last line on stdout is one JSON object with the
 * figures (`npm run bench` reads it: cases `claim-sqlite`). `--claims-only` skips part 1.
 *
 * Files in a temporary folder, removed at the end. About two minutes (one without part 1).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewMessage } from '../src/storage/contract.js';
import { SqliteStorage } from '../src/storage/sqlite/adapter.js';
import { buildNewMessage } from '../src/testing/storage-suite/index.js';

const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-bench-claim-'));
let files = 0;
const newPath = (): string => join(dir, `db-${++files}.sqlite`);

type Insert = (batch: readonly NewMessage[]) => Promise<void>;

function storageInserter(): Insert {
  const storage = new SqliteStorage({ path: newPath(), synchronous: 'NORMAL' });
  return async (batch) => void (await storage.insertMessages(batch));
}

/** CPU microseconds per message of one round: 8 requesters storing 2,000 messages in `size`-message requests of `principals` in turn. */
async function insertRound(insert: Insert, size: number, principals: number, round: number): Promise<number> {
  const requests = Array.from({ length: 2_000 / size }, (_, i) =>
    Array.from({ length: size }, () => buildNewMessage({ principalId: `p${(round * 2_000 + i) % principals}`, createdAt: Date.now() })),
  );
  const started = process.cpuUsage();
  await Promise.all(
    Array.from({ length: 8 }, async (_, requester) => {
      for (let i = requester; i < requests.length; i += 8) await insert(requests[i]!);
    }),
  );
  const { user, system } = process.cpuUsage(started);
  return (user + system) / 2_000;
}

/** Median CPU microseconds per message over 20 rounds (after 2). */
async function insertCost(size: number, principals: number): Promise<number> {
  const insert = storageInserter();
  const costs: number[] = [];
  for (let round = 0; round < 22; round++) {
    const cost = await insertRound(insert, size, principals, round);
    if (round >= 2) costs.push(cost);
  }
  return median(costs);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** A storage with 1,000,000 messages queued, `principals` principals taking turns storing 1,000 at a time. */
async function backlog(principals: number): Promise<SqliteStorage> {
  const path = newPath();
  const loading = new SqliteStorage({ path, synchronous: 'NORMAL' });
  for (let i = 0; i < 1_000; i++) {
    const principalId = `p${i % principals}`;
    await loading.insertMessages(Array.from({ length: 1_000 }, () => buildNewMessage({ principalId, createdAt: 1_000 })));
  }
  await loading.close();
  return new SqliteStorage({ path });
}

/** One claim of 256, timed, then its messages submitted; the time in ms and how many principals it took. */
async function claimOnce(storage: SqliteStorage): Promise<{ ms: number; principals: number }> {
  const started = performance.now();
  const claimed = await storage.claimMessages({ owner: 'bench', limit: 256, leaseMs: 600_000, now: 2_000 });
  const ms = performance.now() - started;
  await Promise.all(claimed.map((m) => storage.recordSubmission(m.ref, 0, `c-${m.ref}`, 2_001)));
  return { ms, principals: new Set(claimed.map((m) => m.principalId)).size };
}

const claimsOnly = process.argv.includes('--claims-only');
const say = (line: string): void => console.error(line);
const us = (value: number): string => `${value.toFixed(1)} us`;
const ms = (value: number): string => `${value.toFixed(2)} ms`;

try {
  const inserts: { size: number; principals: number; fairUs: number }[] = [];
  if (!claimsOnly) {
    say('Inserts: CPU us per message, median of 20 rounds');
    for (const principals of [1, 1_000]) {
      for (const size of [1, 100]) {
        const cost = await insertCost(size, principals);
        inserts.push({ size, principals, fairUs: cost });
        say(`  ${size}-message requests, ${principals} principal(s): ${us(cost)}`);
      }
    }
  }

  say('Claims of 256 with 1,000,000 queued');
  const storages: Record<number, SqliteStorage> = {};
  for (const principals of [1_000, 1]) {
    const loading = performance.now();
    storages[principals] = await backlog(principals);
    say(`  loaded over ${principals} principal(s) at ${Math.round(1e6 / ((performance.now() - loading) / 1_000))} msg/s`);
  }
  const times: Record<number, number[]> = { 1_000: [], 1: [] };
  const seen: Record<number, number> = {};
  for (let i = 0; i < 33; i++) {
    for (const principals of i % 2 === 0 ? [1_000, 1] : [1, 1_000]) {
      const claim = await claimOnce(storages[principals]!);
      if (i >= 3) times[principals]!.push(claim.ms);
      seen[principals] = claim.principals;
    }
  }
  const figures: Record<number, { median: number; p90: number; principals: number }> = {};
  for (const principals of [1_000, 1]) {
    const sorted = [...times[principals]!].sort((a, b) => a - b);
    figures[principals] = { median: median(sorted), p90: sorted[Math.floor(sorted.length * 0.9)]!, principals: seen[principals]! };
    say(`  over ${principals} principal(s): median ${ms(median(sorted))}, p90 ${ms(sorted[Math.floor(sorted.length * 0.9)]!)} (a claim took ${seen[principals]} principals)`);
    await storages[principals]!.close();
  }
  const ratio = median(times[1_000]!) / median(times[1]!);
  say(`  ratio 1,000 principals / 1 principal: ${ratio.toFixed(2)}x (target <= 2x)`);
  console.log(
    JSON.stringify({
      storage: 'sqlite',
      claims: 30,
      manyKeys: { keys: 1_000, medianMs: figures[1_000]!.median, p90Ms: figures[1_000]!.p90, keysPerClaim: figures[1_000]!.principals },
      oneKey: { keys: 1, medianMs: figures[1]!.median, p90Ms: figures[1]!.p90, keysPerClaim: figures[1]!.principals },
      ratio: Number(ratio.toFixed(3)),
      inserts,
    }),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

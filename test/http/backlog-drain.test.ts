/**
 * `Retry-After` of a backlog refusal through the public router, against a queue that really
 * drains (the simulator at a fixed `tps`): right after a start it is about what the excess
 * takes to drain, not 60 s; with two instances draining one PostgreSQL queue it counts
 * both; and it is never more than the drain then really took (plus a second of rounding).
 */
import { randomBytes } from 'node:crypto';
import express from 'express';
import request from 'supertest';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSmsRouter, MemoryStorage, SimulatorDelivery, staticKeys, type SmsRouter, type Storage } from '../../src/index.js';
import { PostgresStorage } from '../../src/postgres.js';
import { buildNewMessages } from '../../src/testing/storage-suite/fixtures.js';
import { eventually } from '../helpers/poll.js';
import { makePool, postgresUnavailable } from '../helpers/services.js';

const keys = staticKeys([{ key: 'a', id: 'a', profiles: ['12345'] }]);
const PER_KEY = 500;

const admin = makePool(2);
const pgUnreachable = await postgresUnavailable(admin);
if (pgUnreachable !== null) console.warn(`the PostgreSQL backlog drain test is skipped: ${pgUnreachable}`);
afterAll(() => admin.end());

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A router on `storage` whose carrier takes `tps` parts a second; counts what it submitted. */
function gateway(storage: Storage, tps: number) {
  const sms: SmsRouter = createSmsRouter({
    verifyKey: keys,
    storage,
    delivery: new SimulatorDelivery({ tps, latencyMs: 1 }),
    // Few held at once, so close() has little to submit at this pace.
    worker: { concurrency: 8, pollIntervalMs: 20 },
    backlog: { perKey: PER_KEY },
    rateLimit: false,
  });
  cleanups.push(() => sms.close());
  const counter = { submitted: 0 };
  sms.on('message.submitted', () => counter.submitted++);
  const app = express().use(sms);
  const sendOne = () =>
    request(app)
      .post('/api/outbox/create')
      .set('X-API-Key', 'a')
      .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'one more' }] });
  return { sms, counter, sendOne };
}

/** `Retry-After` and the key's queued count of a 429 `QUEUE_FULL`. */
function refusal(res: request.Response): { retryAfter: number; queued: number } {
  expect([res.status, res.body.code]).toEqual([429, 'QUEUE_FULL']);
  const queued = Number(/: (\d+) queued/.exec(res.body.details as string)![1]);
  return { retryAfter: Number(res.headers['retry-after']), queued };
}

/** Seconds until `count` more parts are submitted, by `submitted()`. */
async function secondsToSubmit(count: number, submitted: () => number): Promise<number> {
  const from = submitted();
  const started = Date.now();
  await eventually(() => submitted() - from >= count, { timeoutMs: 30_000, intervalMs: 5, what: `${count} more submitted` });
  return (Date.now() - started) / 1000;
}

describe('Retry-After of a full backlog, draining', () => {
  it('right after a start: about the excess over the drain rate, not 60 s', { timeout: 30_000 }, async () => {
    const storage = new MemoryStorage();
    await storage.insertMessages(buildNewMessages(1_000, { principalId: 'a', profileCode: '12345', createdAt: Date.now() }));
    const { counter, sendOne } = gateway(storage, 200);
    await eventually(() => counter.submitted >= 100, { timeoutMs: 5_000, what: '100 submitted' });

    const { retryAfter, queued } = refusal(await sendOne());
    const excess = queued + 1 - PER_KEY;
    const took = await secondsToSubmit(excess, () => counter.submitted);
    console.log(`[backlog drain] one instance: Retry-After ${retryAfter} s; ${excess} over the bound drained in ${took.toFixed(2)} s`);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil(took) + 1);
  });

  it.skipIf(pgUnreachable !== null)(
    'two instances on one PostgreSQL queue: counts both drains, not N times the time',
    { timeout: 60_000 },
    async () => {
      const schema = `backlog_${randomBytes(6).toString('hex')}`;
      cleanups.push(() => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
      const pools = [makePool(4), makePool(4)];
      cleanups.push(() => Promise.all(pools.map((pool) => pool.end())));
      const [one, two] = pools.map((pool) => new PostgresStorage({ pool, schema })) as [PostgresStorage, PostgresStorage];
      await one.ready();
      await one.insertMessages(buildNewMessages(1_600, { principalId: 'a', profileCode: '12345', createdAt: Date.now() }));
      // 100 a second each, 200 in all.
      const a = gateway(one, 100);
      const b = gateway(two, 100);
      const submitted = () => a.counter.submitted + b.counter.submitted;
      await eventually(() => a.counter.submitted >= 20 && b.counter.submitted >= 20, { timeoutMs: 10_000, what: 'both instances submitting' });

      // A client that keeps trying through instance `a` only, once every 60 submits (about
      // 0.3 s) for about 2 s.
      let last = refusal(await a.sendOne());
      for (let round = 1; round <= 7; round++) {
        const next = submitted() + 60;
        await eventually(() => submitted() >= next, { timeoutMs: 10_000, intervalMs: 5, what: '60 more submitted' });
        last = refusal(await a.sendOne());
      }
      const excess = last.queued + 1 - PER_KEY;
      const took = await secondsToSubmit(excess, submitted);
      console.log(`[backlog drain] two instances: Retry-After ${last.retryAfter} s; ${excess} over the bound drained in ${took.toFixed(2)} s`);
      expect(last.retryAfter).toBeLessThanOrEqual(Math.ceil(took) + 1);
    },
  );
});

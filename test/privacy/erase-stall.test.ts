/**
 * `sms.erase` of a long history does not hold the process: 100,000 messages of one number
 * (still scheduled, so each is also ended `cancelled`, the heaviest write an erase makes) are
 * erased on memory and SQLite while the router keeps answering sends, and the event loop is
 * never held long. The hold is measured as the sweeps' is (test/helpers/loop-stall.ts: a
 * timer-gap probe that leaves out the collector's pauses and the time the OS gave other
 * processes). The aim is 20 ms: a step of 25 messages takes under 1 ms of CPU in memory and
 * about 5 ms on SQLite, and runs measured 7 to 16 ms on a 2-core machine shared with a few
 * other test runs, 20 to 28 ms with a dozen (the collector's incremental work and cold code
 * count). As the sweeps' test does, the bound is twice the aim, 40 ms, for the best of up to
 * three runs; a hold over 100 ms is no noise and is not tried again. Before the erase worked
 * in steps, it held the loop for the whole erase.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStorage, staticKeys, type Storage } from '../../src/index.js';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';
import { buildNewMessages } from '../../src/testing/storage-suite/fixtures.js';
import { createGateway, type TestGateway } from '../helpers/gateway.js';
import { ScriptedDelivery } from '../helpers/scripted-delivery.js';
import { bestStall, longestStall } from '../helpers/loop-stall.js';

const NUMBER = '254712345678';
const COUNT = Number(process.env.ERASE_COUNT ?? 100_000);
/** What the erase aims at; the bound below is twice it (see the module's TSDoc). */
const AIM_MS = 20;
const BOUND_MS = 2 * AIM_MS;
const SEND_EVERY_MS = 50;

const gateways: TestGateway[] = [];
const cleanups: (() => void)[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.sms.close();
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const STORAGES: { name: string; make: () => Storage }[] = [
  { name: 'memory', make: () => new MemoryStorage() },
  {
    name: 'SQLite',
    make: () => {
      const dir = mkdtempSync(join(tmpdir(), 'sms-erase-stall-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      return new SqliteStorage({ path: join(dir, 'outbox.db') });
    },
  },
];

/** Fills a router on `make()` with `COUNT` scheduled messages to `NUMBER`, erases them while sending; the longest hold, ms. */
async function eraseWhileSending(make: () => Storage): Promise<number> {
  const storage = make();
  const gateway = createGateway({
    verifyKey: staticKeys([{ key: 'acme-key', id: 'acme', profiles: ['12345'] }]),
    storage,
    delivery: new ScriptedDelivery(),
    rateLimit: false,
    backlog: false,
  });
  gateway.sms.on('error', () => undefined);
  gateways.push(gateway);
  await gateway.sms.ready();
  const now = Date.now();
  for (let stored = 0; stored < COUNT; stored += 1000) {
    await storage.insertMessages(buildNewMessages(1000, { principalId: 'acme', profileCode: '12345', recipient: NUMBER, createdAt: now, sendAt: now + 86_400_000 }));
  }
  let erasing = true;
  const answers: number[] = [];
  const sending = (async () => {
    while (erasing) {
      const res = await request(gateway.app).post('/api/outbox/create').set('X-API-Key', 'acme-key')
        .send({ profile_code: '12345', messages: [{ recipient: '254722000111', message: 'Meanwhile' }] });
      answers.push(res.status);
      // A client's pace, not a flood: the erase shares the storage with the sends.
      await new Promise((resolve) => setTimeout(resolve, SEND_EVERY_MS));
    }
  })();
  let summary: Awaited<ReturnType<typeof gateway.sms.erase>> | undefined;
  const stall = await longestStall(async () => {
    summary = await gateway.sms.erase({ recipient: NUMBER }).finally(() => {
      erasing = false;
    });
  });
  await sending;
  expect(summary).toMatchObject({ messages: COUNT, cancelled: COUNT });
  expect(answers.length, 'sends answered while the erase ran').toBeGreaterThan(5);
  expect(answers.every((status) => status === 200)).toBe(true);
  const page = await gateway.sms.storage.listMessages!({ principalId: 'acme', recipient: NUMBER, limit: 1 });
  expect(page.messages).toEqual([]);
  return stall;
}

describe.each(STORAGES)('sms.erase of 100,000 messages on $name', ({ make }) => {
  it(`holds the event loop at most ${BOUND_MS} ms (aim ${AIM_MS} ms), and sends are answered meanwhile`, { timeout: 600_000 }, async () => {
    const stall = await bestStall(() => eraseWhileSending(make), BOUND_MS, 100);
    expect(stall, `held the event loop ${stall.toFixed(1)} ms at most`).toBeLessThanOrEqual(BOUND_MS);
  });
});

/**
 * Spend-cap counters do not outlive their period: through the real router, on memory, SQLite,
 * PostgreSQL and MariaDB, the retention sweep deletes the counters of a day and a month that
 * ended (the unit_counters rows), and keeps those still counting, so a cap starts each day
 * from 0 and the table holds a few rows per principal however long the gateway runs.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { staticKeys, type Storage } from '../../src/index.js';
import { createGateway, type TestGateway } from '../helpers/gateway.js';
import { ScriptedDelivery } from '../helpers/scripted-delivery.js';
import { eventually } from '../helpers/poll.js';
import { freshStorages, routerTestServices } from '../helpers/fresh-storages.js';

const { admin, pgUnreachable: unreachable, maria, mariaUnreachable, gateways, cleanups } = await routerTestServices<TestGateway>();

const DAY = 86_400_000;
/** Noon UTC on 29 November 2026. */
const T0 = Date.UTC(2026, 10, 29, 12);

function start(storage: Storage, clock: { now: number }): TestGateway {
  const gateway = createGateway({
    verifyKey: staticKeys([{ key: 'capped', id: 'capped-co', profiles: ['12345'], dailyUnits: 100, monthlyUnits: 1000 }]),
    storage,
    delivery: new ScriptedDelivery(),
    rateLimit: false,
    now: () => clock.now,
    retention: { intervalMs: 20, maxAgeMs: 30 * DAY, batchSize: 100 },
  });
  gateway.sms.on('error', () => undefined);
  gateways.push(gateway);
  return gateway;
}

async function send(app: TestGateway['app']): Promise<void> {
  await request(app).post('/api/outbox/create').set('X-API-Key', 'capped')
    .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Hello' }] }).expect(200);
}

const STORAGES = freshStorages('counters', { admin, pgUnreachable: unreachable, maria, mariaUnreachable, cleanups });

describe.each(STORAGES)('spend-cap counters on $name', ({ skip, make }) => {
  it.skipIf(skip)('of a day and a month that ended are deleted by the retention sweep; the live ones stay', async () => {
    const clock = { now: T0 };
    const storage = make();
    const { app } = start(storage, clock);
    await send(app);
    expect(await storage.countedUnits!('capped-co', 'day:2026-11-29')).toBe(1);
    // The next day: the day's counter ended, the month's still counts.
    clock.now = T0 + DAY;
    await send(app);
    await eventually(async () => (await storage.countedUnits!('capped-co', 'day:2026-11-29')) === 0, { what: 'the ended day\'s counter to be purged' });
    expect(await storage.countedUnits!('capped-co', 'day:2026-11-30')).toBe(1);
    expect(await storage.countedUnits!('capped-co', 'month:2026-11')).toBe(2);
    // December: November's counters go, the new ones stay.
    clock.now = T0 + 3 * DAY;
    await send(app);
    await eventually(async () => (await storage.countedUnits!('capped-co', 'month:2026-11')) === 0, { what: 'the ended month\'s counter to be purged' });
    expect(await storage.countedUnits!('capped-co', 'day:2026-11-30')).toBe(0);
    expect(await storage.countedUnits!('capped-co', 'day:2026-12-02')).toBe(1);
    expect(await storage.countedUnits!('capped-co', 'month:2026-12')).toBe(1);
  });
});

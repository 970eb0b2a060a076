/**
 * Spend caps through the real router: a principal's `dailyUnits` and `monthlyUnits` counted
 * in SMS units by the storage with the messages, on memory, SQLite, PostgreSQL and MariaDB (and two
 * PostgreSQL instances racing for the last units); 429 `SPEND_CAP_REACHED` with
 * `Retry-After` to the next midnight (or first of the month) of `spendCaps.timeZone`, and
 * nothing stored; `spend_cap.warning` once, when 80% is reached; the fields and the option
 * checked.
 */
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import {
  MemoryStorage,
  staticKeys,
  type ErrorEvent,
  type Principal,
  type SmsRouterOptions,
  type SpendCapWarningEvent,
  type Storage,
} from '../../src/index.js';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { createGateway, type TestGateway } from '../helpers/gateway.js';
import { ScriptedDelivery } from '../helpers/scripted-delivery.js';
import { makePool } from '../helpers/services.js';
import { freshStorages, routerTestServices } from '../helpers/fresh-storages.js';

const { admin, pgUnreachable: unreachable, maria, mariaUnreachable, gateways, cleanups } = await routerTestServices<TestGateway>();

/** 22:00 UTC on 29 November 2026: 01:00 on the 30th in Nairobi (UTC+3), whose next midnight is 23 hours away. */
const NOW = Date.UTC(2026, 10, 29, 22, 0, 0);
const NAIROBI_MIDNIGHT = Date.UTC(2026, 10, 30, 21, 0, 0);

const keys = staticKeys([
  { key: 'daily', id: 'daily-co', profiles: ['12345'], dailyUnits: 10 },
  { key: 'monthly', id: 'monthly-co', profiles: ['12345'], dailyUnits: 1000, monthlyUnits: 5 },
  { key: 'free', id: 'free-co', profiles: ['12345'] },
]);

/** A gateway on `storage` with the test keys and a clock read from `clock.now`. */
function start(storage: Storage | undefined, clock: { now: number }, options: Partial<SmsRouterOptions> = {}): TestGateway {
  const gateway = createGateway({
    verifyKey: keys,
    rateLimit: false,
    delivery: new ScriptedDelivery(),
    now: () => clock.now,
    spendCaps: { timeZone: 'Africa/Nairobi' },
    ...(storage === undefined ? {} : { storage }),
    ...options,
  });
  gateway.sms.on('error', () => undefined);
  gateways.push(gateway);
  return gateway;
}

/** A send of one message of `units` SMS units (GSM-7), under external id `externalId`. */
function send(app: TestGateway['app'], key: string, units: number, externalId: string) {
  const text = units === 1 ? 'x'.repeat(160) : 'y'.repeat(153 * units);
  return request(app)
    .post('/api/outbox/create')
    .set('X-API-Key', key)
    .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: text, external_id: externalId }] });
}

/** How many messages `key` has under `externalId`. */
async function stored(app: TestGateway['app'], key: string, externalId: string): Promise<number> {
  const res = await request(app).get(`/api/outbox/delivery-status?external_id=${externalId}`).set('X-API-Key', key);
  return res.status === 404 ? 0 : (res.body as unknown[]).length;
}

/** The storages the router is run on here, each made fresh. */
const STORAGES = freshStorages('caps', { admin, pgUnreachable: unreachable, maria, mariaUnreachable, cleanups });

describe.each(STORAGES)('spend caps on $name', ({ skip, make }) => {
  it.skipIf(skip)('counts units to the cap, warns once at 80%, then refuses 429 with Retry-After to midnight in the zone and stores nothing', async () => {
    const clock = { now: NOW };
    const { app, sms } = start(make(), clock);
    const warnings: SpendCapWarningEvent[] = [];
    sms.on('spend_cap.warning', (event) => warnings.push(event));
    for (let i = 0; i < 3; i++) await send(app, 'daily', 2, `ok-${i}`).expect(200);
    expect(warnings).toEqual([]);
    await send(app, 'daily', 2, 'ok-3').expect(200);
    expect(warnings).toEqual([{ principalId: 'daily-co', period: 'day', units: 8, limit: 10, resetsAt: NAIROBI_MIDNIGHT }]);
    const over = await send(app, 'daily', 3, 'over');
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ details: 'The SMS units this key may send in the period are used up', code: 'SPEND_CAP_REACHED' });
    expect(over.headers['retry-after']).toBe(String(23 * 3600));
    expect(await stored(app, 'daily', 'over')).toBe(0);
    await send(app, 'daily', 2, 'last').expect(200);
    await send(app, 'daily', 1, 'over-again').expect(429);
    expect(warnings).toHaveLength(1);
    // Another principal's count is its own.
    await send(app, 'free', 5, 'free').expect(200);
    // Past midnight in Nairobi the day's count starts again from 0.
    clock.now = NAIROBI_MIDNIGHT;
    await send(app, 'daily', 3, 'next-day').expect(200);
    expect(await stored(app, 'daily', 'next-day')).toBe(1);
  });

  it.skipIf(skip)('a monthly cap is answered with Retry-After to the first of the next month in the zone', async () => {
    const clock = { now: NOW };
    const { app } = start(make(), clock);
    await send(app, 'monthly', 4, 'm-1').expect(200);
    const over = await send(app, 'monthly', 2, 'm-2');
    expect(over.status).toBe(429);
    // 01:00 on 30 November in Nairobi: December starts there at 21:00 UTC on 30 November.
    expect(over.headers['retry-after']).toBe(String((Date.UTC(2026, 10, 30, 21) - NOW) / 1000));
    clock.now = Date.UTC(2026, 10, 30, 21);
    await send(app, 'monthly', 2, 'm-3').expect(200);
  });
});

describe('spend caps across two PostgreSQL instances', () => {
  it.skipIf(unreachable !== null)('racing for the last units at the boundary, never more than the cap is stored, and 80% is announced once', async () => {
    const schema = `t_caps_${randomBytes(5).toString('hex')}`;
    const pools = [makePool(6), makePool(6)];
    cleanups.push(async () => {
      for (const gateway of gateways.splice(0)) await gateway.sms.close();
      await Promise.all(pools.map((pool) => pool.end()));
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    });
    const clock = { now: NOW };
    const capped = staticKeys([{ key: 'racer', id: 'racer-co', profiles: ['12345'], dailyUnits: 40 }]);
    const [one, two] = pools.map((pool) => start(new PostgresStorage({ pool, schema }), clock, { verifyKey: capped }));
    await one!.sms.ready();
    await two!.sms.ready();
    const warnings: SpendCapWarningEvent[] = [];
    for (const { sms } of [one!, two!]) sms.on('spend_cap.warning', (event) => warnings.push(event));
    const apps = [one!.app, two!.app];
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => send(apps[i % 2]!, 'racer', 1, `burst-${i}`)));
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(40);
    expect(statuses.filter((s) => s === 429)).toHaveLength(60);
    const { rows } = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".ledger_messages`);
    expect(rows[0]!.n).toBe(40);
    expect(warnings).toEqual([{ principalId: 'racer-co', period: 'day', units: 32, limit: 40, resetsAt: NAIROBI_MIDNIGHT }]);
  });
});

describe('spend caps are checked', () => {
  it('at construction: a cap that is not a count of units, a zone that is not one', () => {
    expect(() => staticKeys([{ key: 'k', id: 'p', dailyUnits: -1 }])).toThrow(/dailyUnits must be an integer of SMS units from 0, got -1/);
    expect(() => staticKeys([{ key: 'k', id: 'p', monthlyUnits: 2.5 }])).toThrow(/monthlyUnits must be an integer/);
    expect(() => staticKeys([{ key: 'k', id: 'p', dailyUnits: '10' as never }])).toThrow(/dailyUnits must be an integer of SMS units from 0, got a string/);
    expect(() => createGateway({ spendCaps: { timeZone: 'Mars/Olympus' } })).toThrow(/spendCaps.*IANA time zone/);
    expect(() => createGateway({ spendCaps: { timezone: 'UTC' } as never })).toThrow(/Did you mean `timeZone`/);
  });

  it("a host verifier's unreadable cap is a 500 with a VERIFY_KEY_RESULT event, never a send without the cap", async () => {
    const clock = { now: NOW };
    const { app, sms } = start(undefined, clock, { verifyKey: (): Principal => ({ id: 'odd', profiles: ['12345'], dailyUnits: 'ten' as never }) });
    const errors: ErrorEvent[] = [];
    sms.on('error', (event) => errors.push(event));
    await send(app, 'any', 1, 'x').expect(500);
    expect(errors.map((event) => event.code)).toEqual(['VERIFY_KEY_RESULT']);
  });

  it('a cap on a storage that keeps no counters is a 500 with a SPEND_CAPS_UNSUPPORTED event, and nothing is stored', async () => {
    const clock = { now: NOW };
    const storage: Storage = Object.assign(new MemoryStorage(), { countedUnits: undefined });
    const { app, sms } = start(storage, clock);
    const errors: ErrorEvent[] = [];
    sms.on('error', (event) => errors.push(event));
    await send(app, 'daily', 1, 'x').expect(500);
    expect(errors.map((event) => event.code)).toEqual(['SPEND_CAPS_UNSUPPORTED']);
    expect(await stored(app, 'daily', 'x')).toBe(0);
    await send(app, 'free', 1, 'y').expect(200);
  });
});

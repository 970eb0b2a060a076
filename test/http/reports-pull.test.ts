/**
 * `GET /api/outbox/reports` through the real router, on memory, SQLite and PostgreSQL: the
 * caller's delivery reports in the order they were made, in the callback's body, with and
 * without a callback URL; a client that keeps `next` gets each report once, also from another
 * instance (a new router over the same storage); pull-only principals and profiles, whose
 * reports are never POSTed; coded refusals of bad input.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { MemoryStorage, staticKeys, staticProfiles, type Storage } from '../../src/index.js';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { createGateway, KEY, OTHER_KEY, testKeys, type TestGateway } from '../helpers/gateway.js';
import { ScriptedDelivery } from '../helpers/scripted-delivery.js';
import { makePool, postgresUnavailable } from '../helpers/services.js';

const admin = makePool(2);
const unreachable = await postgresUnavailable(admin);
const dirs: string[] = [];
const schemas: string[] = [];
const pools = [admin];
const gateways: TestGateway[] = [];

afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.sms.close();
});
afterAll(async () => {
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  for (const pool of pools.splice(0).reverse()) await pool.end();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A later time than any test runs at: a message sent for it stays `scheduled` until cancelled. */
const LATER = new Date(Date.now() + 86_400_000).toISOString();

/** Each storage the endpoint is tested on: `open` makes a storage over the same data each time it is called. */
const STORAGES: { name: string; skip: boolean; place: () => () => Storage }[] = [
  {
    name: 'memory',
    skip: false,
    place: () => {
      const one = new MemoryStorage();
      return () => one;
    },
  },
  {
    name: 'SQLite',
    skip: false,
    place: () => {
      const dir = mkdtempSync(join(tmpdir(), 'sms-reports-'));
      dirs.push(dir);
      return () => new SqliteStorage({ path: join(dir, 'outbox.db') });
    },
  },
  {
    name: 'PostgreSQL',
    skip: unreachable !== null,
    place: () => {
      const schema = `t_reports_${randomBytes(5).toString('hex')}`;
      schemas.push(schema);
      return () => {
        const pool = makePool(4);
        pools.push(pool);
        return new PostgresStorage({ pool, schema });
      };
    },
  },
];

/** Sends one scheduled message (it waits until cancelled) with `key`, with a callback URL or not; its ref. */
async function send(app: Express, options: { key?: string; profile?: string; callback?: boolean } = {}): Promise<string> {
  const res = await request(app)
    .post('/api/outbox/create')
    .set('X-API-Key', options.key ?? KEY)
    .send({
      profile_code: options.profile ?? '12345',
      send_at: LATER,
      ...(options.callback === true ? { dlr_callback_url: 'https://client.example/dlr' } : {}),
      messages: [{ recipient: '254712345678', message: 'Hello', external_id: 'r-1' }],
    });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body as { message_ref: string }[])[0]!.message_ref;
}

/** Ends `ref` (`cancelled`): its report is made. */
async function end(app: Express, ref: string, key = KEY): Promise<void> {
  await request(app).delete(`/api/outbox/messages/${ref}`).set('X-API-Key', key).expect(200);
}

/** `GET /reports` with `query`. */
function pull(app: Express, query = '', key = KEY) {
  return request(app).get(`/api/outbox/reports${query === '' ? '' : `?${query}`}`).set('X-API-Key', key);
}

const refsOf = (res: request.Response): string[] => (res.body as { reports: { data: { message_ref: string } }[] }).reports.map((r) => r.data.message_ref);

for (const storage of STORAGES) {
  describe.skipIf(storage.skip)(`GET /reports on ${storage.name}`, () => {
    async function gateway(open: () => Storage, options: Parameters<typeof createGateway>[0] = {}): Promise<TestGateway> {
      const created = createGateway({ storage: open(), delivery: new ScriptedDelivery(), ...options });
      gateways.push(created);
      await created.sms.ready();
      return created;
    }

    it('answers each report once, in the order made, in the callback\u2019s body, with a callback URL or without, from any instance', async () => {
      const open = storage.place();
      const { app } = await gateway(open);
      const first = await send(app, { callback: true });
      const second = await send(app);
      const others = await send(app, { key: OTHER_KEY, profile: '99999' });
      expect((await pull(app)).body).toEqual({ reports: [], next: null });
      await end(app, second);
      await end(app, first);
      await end(app, others, OTHER_KEY);
      const res = await pull(app);
      expect(res.status).toBe(200);
      expect(refsOf(res)).toEqual([second, first]);
      const report = res.body.reports[0];
      expect(report).toMatchObject({ uid: second, actor_type: 'system', event_type: 'sms_delivery_status', data: { message_ref: second, status: 'cancelled', external_id: 'r-1', recipient: '254712345678' } });
      expect(typeof res.body.next).toBe('string');
      // Nothing new: the same cursor back, to keep.
      const again = await pull(app, `after=${res.body.next}`);
      expect(again.body).toEqual({ reports: [], next: res.body.next });
      // Another instance over the same storage goes on from the kept cursor.
      const later = await send(app);
      await end(app, later);
      const { app: other } = await gateway(open);
      const next = await pull(other, `after=${res.body.next}`);
      expect(refsOf(next)).toEqual([later]);
      expect(refsOf(await pull(other, 'limit=1'))).toEqual([second]);
      expect(refsOf(await pull(other, '', OTHER_KEY))).toEqual([others]);
    });

    it('pull only (a principal\u2019s or a profile\u2019s reportDelivery): no callback is kept or attempted, the report is pulled', async () => {
      const keys = staticKeys([
        { key: 'pull-key', id: 'puller', profiles: ['12345'], reportDelivery: 'pull' },
        { key: 'push-key', id: 'pusher', profiles: ['PULLP'] },
      ]);
      const profiles = staticProfiles([
        { code: '12345', owners: ['puller'] },
        { code: 'PULLP', owners: ['pusher'], reportDelivery: 'pull' },
      ]);
      const { app } = await gateway(storage.place(), { verifyKey: keys, resolveProfile: profiles });
      for (const [key, profile] of [['pull-key', '12345'], ['push-key', 'PULLP']] as const) {
        const ref = await send(app, { key, profile, callback: true });
        const status = await request(app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', key).expect(200);
        expect(status.body.callback, key).toBeNull();
        await end(app, ref, key);
        expect(refsOf(await pull(app, '', key))).toEqual([ref]);
      }
    });

    it('refuses a cursor it did not give, and bad parameters, with coded answers', async () => {
      const { app } = await gateway(storage.place());
      for (const [query, status, code] of [
        ['after=nope', 400, 'INVALID_CURSOR'],
        [`after=${Buffer.from('v1.1.1').toString('base64url')}`, 400, 'INVALID_CURSOR'],
        ['limit=0', 422, 'INVALID_LIST_QUERY'],
        ['since=2026-01-01T00:00:00Z', 422, 'INVALID_LIST_QUERY'],
        ['after=a&after=b', 422, 'INVALID_LIST_QUERY'],
      ] as const) {
        const res = await pull(app, query);
        expect(res.status, query).toBe(status);
        expect(res.body.code, query).toBe(code);
      }
    });
  });
}

describe('GET /reports: keys', () => {
  it('needs the read scope', async () => {
    const created = createGateway({ verifyKey: testKeys, delivery: new ScriptedDelivery() });
    gateways.push(created);
    const res = await pull(created.app, '', 'test-key-send-only');
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('READ_SCOPE_DENIED');
  });
});

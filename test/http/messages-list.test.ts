/**
 * `GET /api/outbox/messages` through the real router, on memory, SQLite and PostgreSQL: the
 * caller's messages newest first, each as the status lookup answers it; every filter; paging
 * by cursor while new messages are sent; the coded refusals of bad input; the key's scope;
 * and the path's 405 shared with the cancel by external id.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { MemoryStorage, type RecordStore, type Storage } from '../../src/index.js';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { createGateway, KEY, OTHER_KEY, SEND_ONLY_KEY, type TestGateway } from '../helpers/gateway.js';
import { NaiveRecordStore } from '../helpers/naive-record-store.js';
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

interface Sent {
  ref: string;
}

/** The storages the endpoint is tested on. */
const STORAGES: { name: string; skip: boolean; create: () => Storage | RecordStore }[] = [
  { name: 'memory', skip: false, create: () => new MemoryStorage() },
  {
    name: 'SQLite',
    skip: false,
    create: () => {
      const dir = mkdtempSync(join(tmpdir(), 'sms-list-'));
      dirs.push(dir);
      return new SqliteStorage({ path: join(dir, 'outbox.db') });
    },
  },
  {
    name: 'PostgreSQL',
    skip: unreachable !== null,
    create: () => {
      const schema = `t_list_${randomBytes(5).toString('hex')}`;
      schemas.push(schema);
      const pool = makePool(4);
      pools.push(pool);
      return new PostgresStorage({ pool, schema });
    },
  },
];

/** Sends one scheduled quick message (it stays `scheduled`) with `key`; returns its ref. */
async function send(app: Express, fields: { recipient?: string; external_id?: string; profile_code?: string } = {}, key = KEY): Promise<Sent> {
  const res = await request(app)
    .post('/api/outbox/create')
    .set('X-API-Key', key)
    .send({
      profile_code: fields.profile_code ?? '12345',
      send_at: LATER,
      messages: [{ recipient: fields.recipient ?? '254712345678', message: 'Hello', external_id: fields.external_id ?? 'ext' }],
    });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { ref: (res.body as { message_ref: string }[])[0]!.message_ref };
}

/** `GET /messages` with `query`; the answer. */
function list(app: Express, query = '', key = KEY) {
  return request(app).get(`/api/outbox/messages${query === '' ? '' : `?${query}`}`).set('X-API-Key', key);
}

/** The refs of a list answer. */
const refs = (res: request.Response): string[] => (res.body as { messages: { message_ref: string }[] }).messages.map((m) => m.message_ref);

for (const storage of STORAGES) {
  describe.skipIf(storage.skip)(`GET /messages on ${storage.name}`, () => {
    async function gateway(): Promise<TestGateway> {
      const created = createGateway({ storage: storage.create(), delivery: new ScriptedDelivery() });
      gateways.push(created);
      await created.sms.ready();
      return created;
    }

    it("lists only the caller's messages, newest first, each exactly as the status lookup answers it", async () => {
      const { app } = await gateway();
      const mine: Sent[] = [];
      for (let i = 0; i < 4; i++) mine.push(await send(app, { external_id: `e-${i}` }));
      await send(app, { profile_code: '99999' }, OTHER_KEY);
      const res = await list(app);
      expect(res.status).toBe(200);
      expect(refs(res)).toEqual(mine.map((m) => m.ref).reverse());
      expect(res.body.next).toBeNull();
      for (const item of res.body.messages as { message_ref: string }[]) {
        const status = await request(app).get(`/api/outbox/delivery-status/${item.message_ref}`).set('X-API-Key', KEY).expect(200);
        expect(item).toEqual(status.body);
      }
      expect(refs(await list(app, '', OTHER_KEY))).toHaveLength(1);
    });

    it('pages by cursor: every message once, in order, and messages sent meanwhile only on a new first page', async () => {
      const { app } = await gateway();
      const sent: string[] = [];
      for (let i = 0; i < 7; i++) sent.push((await send(app)).ref);
      const seen: string[] = [];
      let res = await list(app, 'limit=3');
      seen.push(...refs(res));
      while (res.body.next !== null) {
        expect(typeof res.body.next).toBe('string');
        const newer = await send(app);
        res = await list(app, `limit=3&cursor=${encodeURIComponent(res.body.next as string)}`);
        seen.push(...refs(res));
        expect(seen).not.toContain(newer.ref);
      }
      expect(seen).toEqual([...sent].reverse());
      const fresh = await list(app, 'limit=1000');
      expect(refs(fresh)).toHaveLength(7 + 2);
    });

    it('filters by state, recipient, external id, profile and acceptance time, together too', async () => {
      const { app } = await gateway();
      const a = await send(app, { recipient: '254712345678', external_id: 'order-1', profile_code: '12345' });
      const b = await send(app, { recipient: '254712345679', external_id: 'order-2', profile_code: '12345' });
      const c = await send(app, { recipient: '254712345678', external_id: 'order-2', profile_code: '22021501' });
      await request(app).delete(`/api/outbox/messages/${b.ref}`).set('X-API-Key', KEY).expect(200);
      expect(refs(await list(app, 'state=cancelled'))).toEqual([b.ref]);
      expect(refs(await list(app, 'state=scheduled'))).toEqual([c.ref, a.ref]);
      expect(refs(await list(app, 'state=scheduled,cancelled'))).toEqual([c.ref, b.ref, a.ref]);
      expect(refs(await list(app, `recipient=${encodeURIComponent('+254712345678')}`))).toEqual([c.ref, a.ref]);
      expect(refs(await list(app, 'external_id=order-2'))).toEqual([c.ref, b.ref]);
      expect(refs(await list(app, 'profile_code=22021501'))).toEqual([c.ref]);
      expect(refs(await list(app, 'external_id=order-2&state=scheduled&recipient=254712345678'))).toEqual([c.ref]);
      const all = await list(app);
      const createdAt = (ref: string) => Date.parse((all.body.messages as { message_ref: string; created_at: string }[]).find((m) => m.message_ref === ref)!.created_at);
      const since = new Date(createdAt(a.ref) - 60_000).toISOString();
      const until = new Date(createdAt(c.ref) + 60_000).toISOString();
      expect(refs(await list(app, `since=${since}&until=${until}`))).toEqual([c.ref, b.ref, a.ref]);
      expect(refs(await list(app, `until=${since}`))).toEqual([]);
      expect(refs(await list(app, `external_id=${encodeURIComponent('a\u0000b')}`))).toEqual([]);
    });

    it('refuses bad input with a coded answer and stores nothing', async () => {
      const { app } = await gateway();
      const cases: [string, number, string, RegExp][] = [
        ['limit=0', 422, 'INVALID_LIST_QUERY', /^limit: /],
        ['limit=1001', 422, 'INVALID_LIST_QUERY', /^limit: /],
        ['limit=ten', 422, 'INVALID_LIST_QUERY', /^limit: /],
        ['stat=failed', 422, 'INVALID_LIST_QUERY', /^stat: is not a parameter/],
        ['state=failed&state=queued', 422, 'INVALID_LIST_QUERY', /^state: give it once/],
        ['state=lost', 422, 'INVALID_LIST_QUERY', /^state: must be one or more of/],
        ['since=yesterday', 422, 'INVALID_LIST_QUERY', /^since: must be an RFC 3339/],
        ['since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z', 422, 'INVALID_LIST_QUERY', /^since: must be before until/],
        ['recipient=abc', 422, 'INVALID_LIST_QUERY', /^recipient: /],
        ['external_id=', 422, 'INVALID_LIST_QUERY', /^external_id: must not be empty/],
        ['cursor=not-a-cursor', 400, 'INVALID_CURSOR', /^cursor is not a next/],
        [`cursor=${Buffer.from('v1.x.1').toString('base64url')}`, 400, 'INVALID_CURSOR', /^cursor/],
      ];
      for (const [query, status, code, details] of cases) {
        const res = await list(app, query);
        expect(res.status, query).toBe(status);
        expect(res.body.code, query).toBe(code);
        expect(res.body.details, query).toMatch(details);
      }
    });
  });
}

describe('GET /messages: keys and methods', () => {
  it('needs a key with the read scope', async () => {
    const created = createGateway({ delivery: new ScriptedDelivery() });
    gateways.push(created);
    expect((await request(created.app).get('/api/outbox/messages')).body.code).toBe('MISSING_API_KEY');
    const denied = await list(created.app, '', SEND_ONLY_KEY);
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('READ_SCOPE_DENIED');
  });

  it('shares its path with the cancel by external id: another method is a 405 naming both', async () => {
    const created = createGateway({ delivery: new ScriptedDelivery() });
    gateways.push(created);
    const res = await request(created.app).post('/api/outbox/messages').set('X-API-Key', KEY).send({});
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, DELETE, OPTIONS');
    expect(res.body.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('is not served over a storage without listMessages: the path then allows DELETE only', async () => {
    const created = createGateway({ storage: new NaiveRecordStore(), delivery: new ScriptedDelivery() });
    gateways.push(created);
    const res = await list(created.app);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('DELETE, OPTIONS');
  });
});

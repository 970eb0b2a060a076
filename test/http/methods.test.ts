/**
 * Methods: a path the router owns, asked with a method it does not serve, is answered 405
 * `METHOD_NOT_ALLOWED` in the router's JSON with `Allow`, before any key check; OPTIONS is
 * 204 with `Allow`; HEAD is answered like GET on the GET paths. Paths the router does not
 * own reach the host.
 */
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createSmsRouter, MemoryStorage, type RequestRejectedEvent } from '../../src/index.js';
import { createGateway, KEY, testKeys, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.sms.close();
  gateway = undefined;
});

const REF = '0193a0c4-7b1e-7cc0-8000-000000000000';
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Each path the router owns (under the default base path), what it serves, and what it does not. */
const OWNED: { path: string; allow: string; wrong: Method[] }[] = [
  { path: '/api/outbox/create', allow: 'POST, OPTIONS', wrong: ['get', 'put', 'patch', 'delete'] },
  { path: '/api/outbox/premium', allow: 'POST, OPTIONS', wrong: ['get', 'put', 'patch', 'delete'] },
  { path: '/api/outbox/delivery-status', allow: 'GET, HEAD, OPTIONS', wrong: ['post', 'put', 'patch', 'delete'] },
  { path: `/api/outbox/delivery-status/${REF}`, allow: 'GET, HEAD, OPTIONS', wrong: ['post', 'put', 'patch', 'delete'] },
  { path: '/api/outbox/openapi.json', allow: 'GET, HEAD, OPTIONS', wrong: ['post', 'put', 'patch', 'delete'] },
];

function expect405(res: request.Response, allow: string, use: string) {
  expect(res.status).toBe(405);
  expect(res.headers.allow).toBe(allow);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body).toEqual({ details: `Method not allowed here; use ${use}`, code: 'METHOD_NOT_ALLOWED' });
}

describe('a path the router owns, with a method it does not serve', () => {
  it('is answered 405 METHOD_NOT_ALLOWED with Allow, with or without a key', async () => {
    gateway = createGateway();
    for (const { path, allow, wrong } of OWNED) {
      for (const method of wrong) {
        const use = allow.startsWith('POST') ? 'POST' : 'GET';
        expect405(await request(gateway.app)[method](path).send({}), allow, use);
        expect405(await request(gateway.app)[method](path).set('X-API-Key', 'not-a-key').send({}), allow, use);
        expect405(await request(gateway.app)[method](path).set('X-API-Key', KEY).send({}), allow, use);
      }
    }
  });

  it('is answered 405 under a mount prefix, a custom base path and with a trailing slash', async () => {
    gateway = createGateway({ basePath: '/v1' }, '/sms');
    expect405(await request(gateway.app).get('/sms/v1/create'), 'POST, OPTIONS', 'POST');
    expect405(await request(gateway.app).get('/sms/v1/create/'), 'POST, OPTIONS', 'POST');
    expect405(await request(gateway.app).delete('/sms/v1/delivery-status/abc'), 'GET, HEAD, OPTIONS', 'GET');
  });

  it('emits request.rejected with status 405 and the endpoint, and stores nothing', async () => {
    const storage = new MemoryStorage();
    gateway = createGateway({ storage });
    const rejected: RequestRejectedEvent[] = [];
    gateway.sms.on('request.rejected', (e) => rejected.push(e));
    await request(gateway.app).put('/api/outbox/create').set('X-API-Key', KEY).send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'x' }] });
    await request(gateway.app).delete(`/api/outbox/delivery-status/${REF}`);
    expect(rejected).toEqual([
      expect.objectContaining({ status: 405, details: 'Method not allowed here; use POST', endpoint: 'quick', principalId: null }),
      expect.objectContaining({ status: 405, endpoint: 'status' }),
    ]);
    const found = await request(gateway.app).get('/api/outbox/delivery-status').query({ external_id: 'x' }).set('X-API-Key', KEY);
    expect(found.body).toEqual([]);
  });
});

describe('HEAD', () => {
  it('is answered like GET on the GET paths, key check and status included, with no body', async () => {
    gateway = createGateway();
    const doc = await request(gateway.app).head('/api/outbox/openapi.json');
    expect([doc.status, doc.headers['content-type'], doc.text]).toEqual([200, expect.stringMatching(/^application\/json/), undefined]);
    expect(Number(doc.headers['content-length'])).toBeGreaterThan(1000);
    expect((await request(gateway.app).head(`/api/outbox/delivery-status/${REF}`)).status).toBe(401);
    expect((await request(gateway.app).head(`/api/outbox/delivery-status/${REF}`).set('X-API-Key', KEY)).status).toBe(404);
    expect((await request(gateway.app).head('/api/outbox/delivery-status?external_id=x').set('X-API-Key', KEY)).status).toBe(200);
  });

  it('is answered 405 with Allow on the POST paths', async () => {
    gateway = createGateway();
    for (const path of ['/api/outbox/create', '/api/outbox/premium']) {
      const res = await request(gateway.app).head(path).set('X-API-Key', KEY);
      expect([res.status, res.headers.allow]).toEqual([405, 'POST, OPTIONS']);
    }
  });
});

describe('OPTIONS', () => {
  it('is answered 204 with Allow and no body on every owned path, without a key', async () => {
    gateway = createGateway();
    for (const { path, allow } of OWNED) {
      const res = await request(gateway.app).options(path);
      expect([res.status, res.headers.allow, res.text]).toEqual([204, allow, '']);
    }
  });

  it('is left to a CORS middleware the host mounts before the router', async () => {
    const sms = createSmsRouter({ verifyKey: testKeys, storage: new MemoryStorage() });
    gateway = { sms, app: express() };
    gateway.app.use((req, res, next) => {
      res.setHeader('Access-Control-Allow-Origin', '*');
      if (req.method !== 'OPTIONS') return next();
      res.setHeader('Access-Control-Allow-Headers', 'Content-Type, X-API-Key');
      res.status(204).end();
    });
    gateway.app.use(sms);
    const preflight = await request(gateway.app).options('/api/outbox/create').set('Origin', 'https://app.example').set('Access-Control-Request-Method', 'POST');
    expect([preflight.status, preflight.headers['access-control-allow-headers']]).toEqual([204, 'Content-Type, X-API-Key']);
    const refused = await request(gateway.app).get('/api/outbox/create').set('Origin', 'https://app.example');
    expect([refused.status, refused.headers['access-control-allow-origin'], refused.body.code]).toEqual([405, '*', 'METHOD_NOT_ALLOWED']);
  });
});

describe('a path the router does not own', () => {
  it("reaches the host's own handler, whatever the method", async () => {
    gateway = createGateway({ openapi: false });
    const unowned = [
      '/api/outbox/create/extra',
      '/api/outbox/delivery-status/a/b',
      '/api/outbox/openapi.json',
      '/api/outbox',
      '/api/outbox/unknown',
      '/create',
    ];
    for (const path of unowned) {
      for (const method of ['get', 'post', 'put', 'delete', 'options'] as const) {
        const res = await request(gateway.app)[method](path).set('X-API-Key', KEY).send({});
        expect({ path, method, status: res.status, body: res.body }).toEqual({ path, method, status: 404, body: { host: 'fell through' } });
      }
    }
  });

  it('keeps a host handler mounted before the router at an owned path, and shadows one mounted after it', async () => {
    const sms = createSmsRouter({ verifyKey: testKeys, storage: new MemoryStorage() });
    gateway = { sms, app: express() };
    gateway.app.delete('/api/outbox/create', (_req, res) => void res.json({ host: 'before' }));
    gateway.app.use(sms);
    gateway.app.put('/api/outbox/create', (_req, res) => void res.json({ host: 'after' }));
    expect((await request(gateway.app).delete('/api/outbox/create')).body).toEqual({ host: 'before' });
    expect((await request(gateway.app).put('/api/outbox/create')).status).toBe(405);
  });
});

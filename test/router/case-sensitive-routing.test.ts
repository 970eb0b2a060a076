/**
 * The router's paths follow the host app's `case sensitive routing` setting, as the host's
 * own routes do: off (Express's default), `/API/Outbox/CREATE` is the quick send endpoint;
 * on, it falls through to the host. Run on Express 5 and, by `npm run test:express4`, 4.
 */
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createSmsRouter, SimulatorDelivery, type RequestRejectedEvent, type SmsRouter } from '../../src/index.js';
import { KEY, testKeys } from '../helpers/gateway.js';

let sms: SmsRouter | undefined;
afterEach(async () => {
  await sms?.close();
  sms = undefined;
});

/** A host app with the router at `mount`, then a host 404 for what falls through. */
function host(setup: (app: express.Express) => void = () => {}, mount = '/', basePath?: string) {
  sms = createSmsRouter({
    verifyKey: testKeys,
    delivery: new SimulatorDelivery({ seed: 7, latencyMs: [1, 2] }),
    rateLimit: false,
    ...(basePath === undefined ? {} : { basePath }),
  });
  const rejected: RequestRejectedEvent[] = [];
  sms.on('request.rejected', (event) => rejected.push(event));
  const app = express();
  setup(app);
  app.use(mount, sms);
  app.use((_req, res) => {
    res.status(404).type('text/html').send('<p>host 404</p>');
  });
  return { app, rejected };
}

const message = { profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Hello', external_id: 'case-1' }] };

function send(app: express.Express, path: string) {
  return request(app).post(path).set('X-API-Key', KEY).set('Content-Type', 'application/json').send(JSON.stringify(message));
}

describe('on a host with case-insensitive routing (the Express default)', () => {
  it('serves the endpoints in any case, base path included', async () => {
    const { app } = host();
    const sent = await send(app, '/API/Outbox/CREATE');
    expect(sent.status).toBe(200);
    const ref = sent.body[0].message_ref as string;
    const byRef = await request(app).get(`/Api/OUTBOX/Delivery-Status/${ref}`).set('X-API-Key', KEY);
    expect(byRef.status).toBe(200);
    expect(byRef.body.message_ref).toBe(ref);
    const byExternalId = await request(app).get('/api/outbox/DELIVERY-STATUS?external_id=case-1').set('X-API-Key', KEY);
    expect(byExternalId.body).toHaveLength(1);
    expect((await request(app).get('/API/OUTBOX/OPENAPI.JSON')).status).toBe(200);
  });

  it("answers another case's wrong method with its 405, and names the endpoint in request.rejected", async () => {
    const { app, rejected } = host();
    const wrongMethod = await request(app).get('/API/OUTBOX/CREATE');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.body.code).toBe('METHOD_NOT_ALLOWED');
    const noKey = await request(app).post('/Api/Outbox/Premium').set('Content-Type', 'application/json').send('{}');
    expect(noKey.status).toBe(401);
    expect(rejected.map((event) => event.endpoint)).toEqual(['quick', 'premium']);
  });

  it('follows a custom base path and a mount prefix the same way', async () => {
    const { app } = host(undefined, '/sms', '/v1');
    expect((await send(app, '/SMS/V1/Create')).status).toBe(200);
  });
});

describe("on a host with `case sensitive routing` enabled", () => {
  it('serves only the exact case; another case falls through to the host', async () => {
    const { app } = host((hostApp) => hostApp.enable('case sensitive routing'));
    const other = await send(app, '/API/outbox/create');
    expect(other.status).toBe(404);
    expect(other.text).toBe('<p>host 404</p>');
    expect((await send(app, '/api/outbox/Create')).text).toBe('<p>host 404</p>');
    expect((await send(app, '/api/outbox/create')).status).toBe(200);
  });

  it('reads the setting of the app the request came through, a mounted sub-app included', async () => {
    const sub = express();
    sub.enable('case sensitive routing');
    const { app } = host((hostApp) => hostApp.use('/strict', sub));
    sub.use(sms!);
    expect((await send(app, '/strict/API/outbox/create')).status).toBe(404);
    expect((await send(app, '/strict/api/outbox/create')).status).toBe(200);
    expect((await send(app, '/API/outbox/create')).status).toBe(200);
  });
});

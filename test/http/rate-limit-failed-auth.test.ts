/** The failed-authentication limit per client address: what it counts, IPv6 grouping, and Express's trust proxy. */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { SmsRouterOptions } from '../../src/index.js';
import { DISABLED_KEY, KEY, type TestGateway } from '../helpers/gateway.js';
import { closeGatewayAfterEach, expect429, send, start, statusQuery } from './limited-gateway.js';

closeGatewayAfterEach();

describe('the failed-authentication limit per address', () => {
  function behindProxy(options: Partial<SmsRouterOptions>): TestGateway['app'] {
    const { app } = start(options);
    // The test client speaks for several addresses through X-Forwarded-For.
    app.set('trust proxy', 'loopback');
    return app;
  }

  it('answers the 21st attempt from an address 429 even with a valid key; another address is unaffected', async () => {
    const app = behindProxy({});
    const attacker = '203.0.113.7';
    for (let i = 0; i < 20; i++) {
      const res = await send(app, `wrong-key-${i}`, 1, 'x', attacker);
      expect(res.status).toBe(401);
    }
    const blocked = await send(app, KEY, 1, 'blocked', attacker);
    expect429(blocked, /^Too many failed API key attempts from this address: at most 20 per 15 minutes; retry in \d+ s$/, 900);
    expect(blocked.headers['ratelimit']).toMatch(/^"failed-auth"; r=0; t=(899|900)$/);
    expect(blocked.headers['ratelimit-policy']).toMatch(/^"failed-auth"; q=20; w=900; pk=:[A-Za-z0-9+/=]+:$/);
    expect((await statusQuery(app, KEY, attacker)).status).toBe(429);

    expect((await send(app, KEY, 1, 'fine', '198.51.100.9')).status).toBe(200);
    expect((await send(app, 'wrong-again', 1, 'x', '198.51.100.9')).status).toBe(401);
  });

  it('counts only 401s: a missing key counts, a disabled key, a 422 and a success do not', async () => {
    const app = behindProxy({ rateLimit: { failedAuth: { limit: 3 } } });
    const ip = '192.0.2.50';
    expect((await send(app, null, 1, 'x', ip)).status).toBe(401);
    expect((await send(app, 'nope', 1, 'x', ip)).status).toBe(401);
    for (let i = 0; i < 5; i++) {
      expect((await send(app, DISABLED_KEY, 1, 'x', ip)).status).toBe(403);
      expect((await send(app, KEY, 1, 'ok', ip)).status).toBe(200);
      expect((await request(app).post('/api/outbox/create').set('X-API-Key', KEY).set('X-Forwarded-For', ip)
        .send({ profile_code: '12345', messages: [] })).status).toBe(422);
    }
    expect((await send(app, 'nope-2', 1, 'x', ip)).status).toBe(401);
    expect((await send(app, KEY, 1, 'x', ip)).status).toBe(429);
  });

  it('never counts valid requests in flight, however many there are at once', async () => {
    const app = behindProxy({ rateLimit: { failedAuth: { limit: 2 } } });
    const ip = '192.0.2.77';
    expect((await send(app, 'wrong', 1, 'x', ip)).status).toBe(401);
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => send(app, KEY, 1, `burst-${i}`, ip)));
    expect(answers.map((res) => res.status)).toEqual(Array(30).fill(200));
  });

  it('groups IPv6 addresses by /56 by default', async () => {
    const app = behindProxy({ rateLimit: { failedAuth: { limit: 2 } } });
    expect((await send(app, 'wrong', 1, 'x', '2001:db8:0:1::1')).status).toBe(401);
    expect((await send(app, 'wrong', 1, 'x', '2001:db8:0:ff::2')).status).toBe(401);
    // Same /56 (2001:db8:0:0::/56) as both attempts above.
    expect((await send(app, KEY, 1, 'x', '2001:db8:0:42::9')).status).toBe(429);
    // The next /56 is somebody else.
    expect((await send(app, KEY, 1, 'x', '2001:db8:0:100::1')).status).toBe(200);
  });

  it("reports once through the error event when Express's trust proxy is true (any client could pick its address)", async () => {
    const { app, sms } = start({});
    app.set('trust proxy', true);
    const errors: unknown[] = [];
    sms.on('error', ({ error }) => errors.push(error));
    expect((await send(app, KEY, 1, 'x', '203.0.113.1')).status).toBe(200);
    expect((await send(app, KEY, 1, 'x', '203.0.113.2')).status).toBe(200);
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/trust proxy/);
  });

  it('counts each IPv6 address alone with ipv6Subnet: false', async () => {
    const app = behindProxy({ rateLimit: { failedAuth: { limit: 1, ipv6Subnet: false } } });
    expect((await send(app, 'wrong', 1, 'x', '2001:db8::1')).status).toBe(401);
    expect((await send(app, KEY, 1, 'x', '2001:db8::1')).status).toBe(429);
    expect((await send(app, KEY, 1, 'x', '2001:db8::2')).status).toBe(200);
  });
});

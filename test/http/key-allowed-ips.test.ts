/**
 * A principal's `allowedIps` through the router, over real sockets: IPv4, IPv6 and the
 * IPv4-mapped IPv6 form a dual-stack server sees, `req.ip` behind Express's `trust proxy`
 * (X-Forwarded-For only when the host trusts its proxy), and each refusal counted as a failed
 * attempt of its address.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { staticKeys, type RequestRejectedEvent, type SmsRouterOptions } from '../../src/index.js';
import { createGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway | undefined;
let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
  server = undefined;
  await gateway?.sms.close();
  gateway = undefined;
});

/** A key per allow-list, by the key. */
const FENCES: Record<string, readonly string[]> = {
  'v4-loopback': ['127.0.0.0/8'],
  'v6-loopback': ['::1'],
  'mapped-loopback': ['::ffff:127.0.0.0/104'],
  'doc-v4': ['203.0.113.0/24', '198.51.100.7'],
  'doc-v6': ['2001:db8:ab::/48'],
  nowhere: [],
};

const verifyKey = staticKeys([
  ...Object.entries(FENCES).map(([key, allowedIps]) => ({ key, id: `p-${key}`, profiles: ['12345'], allowedIps })),
  { key: 'open', id: 'open', profiles: ['12345'] },
]);

/** Starts the gateway listening on `host`; its base URL. */
async function listen(host: string, options: Partial<SmsRouterOptions> = {}): Promise<string> {
  gateway = createGateway({ verifyKey, ...options });
  const listening = gateway.app.listen(0, host);
  server = listening;
  await new Promise((resolve) => listening.once('listening', resolve));
  const { port } = listening.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** A status lookup of no message: 200 `[]` once the key check passed. */
function lookup(target: string | TestGateway['app'], key: string, forwardedFor?: string) {
  const req = request(target).get('/api/outbox/delivery-status?external_id=none').set('X-API-Key', key);
  return forwardedFor === undefined ? req : req.set('X-Forwarded-For', forwardedFor);
}

/** The status of each key's lookup from one client. */
async function answers(target: string | TestGateway['app'], forwardedFor?: string): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  for (const key of [...Object.keys(FENCES), 'open']) {
    const res = await lookup(target, key, forwardedFor);
    out[key] = res.status === 200 ? 200 : `${res.status} ${res.body.code}`;
  }
  return out;
}

const REFUSED = '403 IP_NOT_ALLOWED';

describe('allowedIps', () => {
  it('an IPv4 client of a server on 127.0.0.1 (req.ip 127.0.0.1)', async () => {
    const url = await listen('127.0.0.1');
    expect(await answers(url)).toEqual({
      'v4-loopback': 200, 'v6-loopback': REFUSED, 'mapped-loopback': 200, 'doc-v4': REFUSED, 'doc-v6': REFUSED, nowhere: REFUSED, open: 200,
    });
  });

  it('an IPv4 client of a dual-stack server on :: (req.ip ::ffff:127.0.0.1): IPv4 blocks still match', async () => {
    const url = await listen('::');
    const seen: string[] = [];
    gateway!.sms.on('request.rejected', (event) => seen.push(String(event.ip)));
    expect(await answers(url.replace('[::]', '127.0.0.1'))).toEqual({
      'v4-loopback': 200, 'v6-loopback': REFUSED, 'mapped-loopback': 200, 'doc-v4': REFUSED, 'doc-v6': REFUSED, nowhere: REFUSED, open: 200,
    });
    expect(seen[0]).toBe('::ffff:127.0.0.1');
  });

  it('an IPv6 client of a server on ::1', async () => {
    const url = await listen('::1');
    expect(await answers(url)).toEqual({
      'v4-loopback': REFUSED, 'v6-loopback': 200, 'mapped-loopback': REFUSED, 'doc-v4': REFUSED, 'doc-v6': REFUSED, nowhere: REFUSED, open: 200,
    });
  });

  it("reads X-Forwarded-For only as Express's trust proxy says: the proxy's client behind it, IPv4 and IPv6", async () => {
    gateway = createGateway({ verifyKey });
    const { app } = gateway;
    // Not trusted (Express's default): the header is the client's word, and the socket counts.
    expect((await lookup(app, 'doc-v4', '203.0.113.9')).body.code).toBe('IP_NOT_ALLOWED');
    expect((await lookup(app, 'v4-loopback', '203.0.113.9')).status).toBe(200);

    app.set('trust proxy', 'loopback');
    expect((await lookup(app, 'doc-v4', '203.0.113.9')).status).toBe(200);
    expect((await lookup(app, 'doc-v4', '198.51.100.7')).status).toBe(200);
    expect((await lookup(app, 'doc-v4', '198.51.100.8')).body.code).toBe('IP_NOT_ALLOWED');
    expect((await lookup(app, 'doc-v4', '::ffff:203.0.113.9')).status).toBe(200);
    expect((await lookup(app, 'doc-v6', '2001:db8:ab:cd::1')).status).toBe(200);
    expect((await lookup(app, 'doc-v6', '2001:db8:ac::1')).body.code).toBe('IP_NOT_ALLOWED');
    expect((await lookup(app, 'doc-v6', '203.0.113.9')).body.code).toBe('IP_NOT_ALLOWED');
    // The loopback proxy itself is no longer the client.
    expect((await lookup(app, 'v4-loopback', '203.0.113.9')).body.code).toBe('IP_NOT_ALLOWED');
    // A forwarded address that is no address at all matches no block.
    expect((await lookup(app, 'doc-v4', 'not-an-address')).body.code).toBe('IP_NOT_ALLOWED');
    // Two proxies: with one hop trusted, the client is the last address the proxy added.
    app.set('trust proxy', 1);
    expect((await lookup(app, 'doc-v4', '198.51.100.99, 203.0.113.9')).status).toBe(200);
    expect((await lookup(app, 'doc-v4', '203.0.113.9, 198.51.100.99')).body.code).toBe('IP_NOT_ALLOWED');
  });

  it('answers 403 with the body of the registry, and names the principal in request.rejected', async () => {
    gateway = createGateway({ verifyKey });
    const rejected: RequestRejectedEvent[] = [];
    gateway.sms.on('request.rejected', (event) => rejected.push(event));
    const res = await request(gateway.app).post('/api/outbox/create').set('X-API-Key', 'doc-v4')
      .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'hi' }] });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ details: 'API key may not be used from this address', code: 'IP_NOT_ALLOWED' });
    expect(rejected).toEqual([expect.objectContaining({ status: 403, principalId: 'p-doc-v4', endpoint: 'quick' })]);
  });

  it('counts each refused address as a failed attempt: over the limit, even a key it may use is refused 429', async () => {
    gateway = createGateway({ verifyKey, rateLimit: { failedAuth: { limit: 3 } } });
    const { app } = gateway;
    app.set('trust proxy', 'loopback');
    const stranger = '192.0.2.44';
    for (let i = 0; i < 3; i++) expect((await lookup(app, 'doc-v4', stranger)).body.code).toBe('IP_NOT_ALLOWED');
    const blocked = await lookup(app, 'open', stranger);
    expect(blocked.status).toBe(429);
    expect(blocked.body.details).toMatch(/^Too many failed API key attempts from this address/);
    // The key's own addresses are another client, not held back by the stranger's attempts.
    expect((await lookup(app, 'doc-v4', '203.0.113.9')).status).toBe(200);
  });

  it("answers 500 with VERIFY_KEY_RESULT for a host principal whose allowedIps cannot be read", async () => {
    gateway = createGateway({
      verifyKey: (key) => (key === 'bad' ? { id: 'b', allowedIps: ['10.0.0.0/33'] } : key === 'fresh' ? { id: 'f', allowedIps: ['127.0.0.1', '::ffff:127.0.0.1'] } : null),
    });
    const errors: unknown[] = [];
    gateway.sms.on('error', ({ code, error }) => errors.push([code, (error as Error).message]));
    expect((await lookup(gateway.app, 'fresh')).status).toBe(200);
    expect((await lookup(gateway.app, 'fresh')).status).toBe(200);
    expect((await lookup(gateway.app, 'bad')).status).toBe(500);
    expect(errors).toEqual([
      ['VERIFY_KEY_RESULT', 'verifyKey returned a principal whose allowedIps[0]: "10.0.0.0/33" has a prefix length outside 0 to 32'],
    ]);
  });
});

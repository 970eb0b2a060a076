/**
 * Key expiry through the router: from its `expiresAt` on, a key is refused 401 `KEY_EXPIRED`
 * with a `key.expired` event, not as an unknown key; a principal's second key goes on
 * working, which is how a provider rotates keys with an overlap.
 */
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { staticKeys, type KeyExpiredEvent, type RequestRejectedEvent } from '../../src/index.js';
import { createGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.sms.close();
  gateway = undefined;
  vi.useRealTimers();
});

const OLD_KEY = 'acme-key-2026';
const NEW_KEY = 'acme-key-2027';
const ROTATION_ENDS = Date.parse('2027-01-31T00:00:00Z');

/** One principal, two keys: the old one ends with the overlap window, the new one does not end. */
const rotating = staticKeys([
  { id: 'acme', profiles: ['12345'], keys: [{ key: OLD_KEY, expiresAt: '2027-01-31T00:00:00Z' }, { key: NEW_KEY }] },
]);

function send(key: string) {
  return request(gateway!.app)
    .post('/api/outbox/create')
    .set('X-API-Key', key)
    .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'hi', external_id: key }] });
}

describe('key expiry', () => {
  it('refuses a key from its expiresAt on (401 KEY_EXPIRED and a key.expired event) while the second key of its principal works', async () => {
    // Only Date is faked: the router reads its clock from Date.now, the worker keeps real timers.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(ROTATION_ENDS - 1);
    gateway = createGateway({ verifyKey: rotating });
    const expired: KeyExpiredEvent[] = [];
    const rejected: RequestRejectedEvent[] = [];
    gateway.sms.on('key.expired', (event) => expired.push(event));
    gateway.sms.on('request.rejected', (event) => rejected.push(event));

    // The overlap: both keys work, for the same principal's messages.
    expect((await send(OLD_KEY)).status).toBe(200);
    expect((await send(NEW_KEY)).status).toBe(200);
    const both = await request(gateway.app).get(`/api/outbox/delivery-status?external_id=${OLD_KEY}`).set('X-API-Key', NEW_KEY);
    expect(both.body).toHaveLength(1);
    expect(expired).toEqual([]);

    vi.setSystemTime(ROTATION_ENDS);
    const refused = await send(OLD_KEY);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ details: 'API key has expired', code: 'KEY_EXPIRED' });
    expect(refused.headers['www-authenticate']).toBe('ApiKey header="X-API-Key"');
    expect(expired).toEqual([{ principalId: 'acme', expiresAt: ROTATION_ENDS, endpoint: 'quick', ip: expect.any(String), requestId: undefined }]);
    expect(rejected).toEqual([expect.objectContaining({ status: 401, details: 'API key has expired', principalId: 'acme' })]);

    // Every route refuses it; the new key goes on, and reads what the old one sent.
    const lookup = await request(gateway.app).get('/api/outbox/delivery-status?external_id=x').set('X-API-Key', OLD_KEY);
    expect(lookup.body.code).toBe('KEY_EXPIRED');
    expect(expired.map((event) => event.endpoint)).toEqual(['quick', 'status']);
    expect((await send(NEW_KEY)).status).toBe(200);
    const history = await request(gateway.app).get(`/api/outbox/delivery-status?external_id=${OLD_KEY}`).set('X-API-Key', NEW_KEY);
    expect(history.body).toHaveLength(1);
    // An unknown key is still told apart from an expired one.
    expect((await send('never-issued')).body.code).toBe('INVALID_API_KEY');
  });

  it("takes the earlier of a key's and its principal's expiresAt, and reads the router's `now`", async () => {
    let clock = Date.parse('2027-03-01T00:00:00Z');
    gateway = createGateway({
      now: () => clock,
      verifyKey: staticKeys([
        {
          id: 'acme', profiles: ['12345'], expiresAt: new Date('2027-03-01T00:00:10Z'),
          keys: [{ key: 'early', expiresAt: '2027-03-01T00:00:05Z' }, { key: 'late', expiresAt: Date.parse('2027-06-01T00:00:00Z') }, { key: 'plain' }],
        },
      ]),
    });
    const expired: KeyExpiredEvent[] = [];
    gateway.sms.on('key.expired', (event) => expired.push(event));
    expect((await send('early')).status).toBe(200);
    clock += 5_000;
    expect((await send('early')).body.code).toBe('KEY_EXPIRED');
    expect((await send('late')).status).toBe(200);
    expect((await send('plain')).status).toBe(200);
    clock += 5_000;
    expect((await send('late')).body.code).toBe('KEY_EXPIRED');
    expect((await send('plain')).body.code).toBe('KEY_EXPIRED');
    expect(expired.map((event) => new Date(event.expiresAt).toISOString())).toEqual([
      '2027-03-01T00:00:05.000Z', '2027-03-01T00:00:10.000Z', '2027-03-01T00:00:10.000Z',
    ]);
  });

  it("reads a host verifier's expiresAt, and answers 500 with VERIFY_KEY_RESULT for one that is not a time", async () => {
    const principals: Record<string, object> = {
      lapsed: { id: 'a', expiresAt: new Date(Date.now() - 1000) },
      current: { id: 'b', expiresAt: new Date(Date.now() + 60_000).toISOString() },
      garbled: { id: 'c', expiresAt: 'next tuesday' },
    };
    gateway = createGateway({ verifyKey: (key) => ({ profiles: ['12345'], ...principals[key] }) as never });
    const errors: unknown[] = [];
    gateway.sms.on('error', ({ code, error }) => errors.push([code, (error as Error).message]));
    expect((await send('lapsed')).body.code).toBe('KEY_EXPIRED');
    expect((await send('current')).status).toBe(200);
    expect((await send('garbled')).status).toBe(500);
    expect(errors).toEqual([
      ['VERIFY_KEY_RESULT', expect.stringMatching(/^verifyKey returned a principal whose expiresAt "next tuesday" is not a valid time/)],
    ]);
  });

  it('counts an expired key toward the failed-authentication limit of its address, as any 401', async () => {
    gateway = createGateway({
      verifyKey: staticKeys([{ key: 'old', id: 'acme', profiles: ['12345'], expiresAt: '2000-01-01T00:00:00Z' }, { key: 'good', id: 'b', profiles: ['12345'] }]),
      rateLimit: { failedAuth: { limit: 2 } },
    });
    expect((await send('old')).status).toBe(401);
    expect((await send('old')).status).toBe(401);
    expect((await send('good')).status).toBe(429);
  });
});

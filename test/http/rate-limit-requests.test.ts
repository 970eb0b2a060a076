/** The per-key request limit: its 429, its draft-8 headers, whose limit applies, what it counts; and its in-process store. */
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { MemoryRateLimitStore } from '../../src/index.js';
import { KEY, OTHER_KEY } from '../helpers/gateway.js';
import { closeGatewayAfterEach, expect429, expectNoLegacyHeaders, policy, send, SLOW_KEY, start, statusQuery, verifyKey } from './limited-gateway.js';

closeGatewayAfterEach();

describe('the per-key request limit', () => {
  it('answers 429 with exactly { details, code }, Retry-After and the draft-8 headers once a key is over', async () => {
    const { app } = start({ rateLimit: { requests: { limit: 3, windowMs: 60_000 }, headers: 'always' } });
    for (let i = 1; i <= 3; i++) {
      const ok = await send(app, KEY);
      expect(ok.status).toBe(200);
      expect(policy(ok, 'ratelimit', 'requests')).toMatch(new RegExp(`^"requests"; r=${3 - i}; t=(59|60)$`));
      expect(policy(ok, 'ratelimit-policy', 'requests')).toMatch(/^"requests"; q=3; w=60; pk=:[A-Za-z0-9+/=]+:$/);
      expectNoLegacyHeaders(ok);
    }
    const refused = await send(app, KEY);
    expect429(refused, /^Too many requests: this key may make 3 per 1 minute; retry in \d+ s$/, 60);
    expect(policy(refused, 'ratelimit', 'requests')).toMatch(/^"requests"; r=0; t=\d+$/);
    expect(policy(refused, 'ratelimit-policy', 'requests')).toMatch(/^"requests"; q=3; w=60; /);
    // Another key has its own count.
    const other = await statusQuery(app, OTHER_KEY);
    expect(other.status).toBe(200);
    expect(policy(other, 'ratelimit', 'requests')).toMatch(/^"requests"; r=2; /);
  });

  it('keeps one count per key, over every endpoint, and reports the refusal as request.rejected', async () => {
    const { app, sms } = start({ verifyKey, rateLimit: { requests: { limit: 2 }, headers: 'always' } });
    const rejected: unknown[] = [];
    sms.on('request.rejected', (event) => rejected.push(event));
    expect((await statusQuery(app, KEY)).status).toBe(200);
    expect((await send(app, KEY)).status).toBe(200);
    expect429(await statusQuery(app, KEY), /^Too many requests/, 60);
    // The other principal is untouched (its profile is not 12345, so a status query shows it).
    const other = await statusQuery(app, OTHER_KEY);
    expect(other.status).toBe(200);
    expect(policy(other, 'ratelimit', 'requests')).toMatch(/^"requests"; r=1; /);
    expect(rejected).toEqual([expect.objectContaining({ status: 429, principalId: 'acme', endpoint: 'status' })]);
  });

  it("uses a principal's own rateLimit over the router's default", async () => {
    const { app } = start({ verifyKey, rateLimit: { requests: { limit: 100 }, headers: 'always' } });
    expect((await send(app, SLOW_KEY)).status).toBe(200);
    const second = await send(app, SLOW_KEY);
    expect(second.status).toBe(200);
    expect(policy(second, 'ratelimit-policy', 'requests')).toMatch(/^"requests"; q=2; w=60; /);
    expect429(await send(app, SLOW_KEY), /this key may make 2 per 1 minute/, 60);
    expect((await send(app, KEY)).status).toBe(200);
  });

  it('by default puts the RateLimit headers on refusals only', async () => {
    const { app } = start({ rateLimit: { requests: { limit: 1 } } });
    const ok = await send(app, KEY);
    expect(ok.status).toBe(200);
    expect(ok.headers['ratelimit']).toBeUndefined();
    expect(ok.headers['ratelimit-policy']).toBeUndefined();
    const refused = await send(app, KEY);
    expect429(refused, /^Too many requests: this key may make 1 per 1 minute; retry in \d+ s$/, 60);
    expect(refused.headers['ratelimit']).toMatch(/^"requests"; r=0; t=(59|60)$/);
    expect(refused.headers['ratelimit-policy']).toMatch(/^"requests"; q=1; w=60; pk=:[A-Za-z0-9+/=]+:$/);
  });

  it('takes a function of the principal as the limit', async () => {
    const { app } = start({ rateLimit: { requests: { limit: (principal) => (principal.id === 'acme' ? 1 : 50) } } });
    expect((await send(app, KEY)).status).toBe(200);
    expect((await send(app, KEY)).status).toBe(429);
    expect((await statusQuery(app, OTHER_KEY)).status).toBe(200);
  });

  // A refused request still cost its parsing and validation; a client hammering with bad
  // requests is what the limit is for (docs/rate-limits.md, "What the limits count").
  it('counts every authenticated request, refused ones too: five 422s make the sixth a 429', async () => {
    const { app } = start({ rateLimit: { requests: { limit: 5 } } });
    for (let i = 0; i < 5; i++) {
      const invalid = await request(app).post('/api/outbox/create').set('X-API-Key', KEY)
        .send({ profile_code: '12345', messages: [{ recipient: '+254712345678', message: 'x' }] });
      expect(invalid.status).toBe(422);
    }
    expect429(await send(app, KEY), /^Too many requests: this key may make 5 per 1 minute; /, 60);
  });

  it('is on by default: 600 requests a minute per key, with the messages policy beside it', async () => {
    // Only the headers option is set, so every answer shows the (default) quotas.
    const { app } = start({ rateLimit: { headers: 'always' } });
    const res = await send(app, KEY, 3);
    expect(res.status).toBe(200);
    expect(policy(res, 'ratelimit', 'requests')).toMatch(/^"requests"; r=599; t=(59|60)$/);
    expect(policy(res, 'ratelimit-policy', 'requests')).toMatch(/^"requests"; q=600; w=60; /);
    expect(policy(res, 'ratelimit', 'messages')).toMatch(/^"messages"; r=9997; t=(59|60)$/);
    expect(policy(res, 'ratelimit-policy', 'messages')).toMatch(/^"messages"; q=10000; w=60; pk=:[A-Za-z0-9+/=]+:$/);
    expectNoLegacyHeaders(res);
  });
});

describe('MemoryRateLimitStore', () => {
  it('counts hits per key in a fixed window, synchronously, and starts again when it ends', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_700_000_000_000);
    const store = new MemoryRateLimitStore();
    store.init({ windowMs: 1000 });
    expect(store.get('k')).toBeUndefined();
    expect(store.increment('k')).toMatchObject({ totalHits: 1, resetTime: new Date(1_700_000_001_000) });
    expect(store.increment('k').totalHits).toBe(2);
    expect(store.increment('other').totalHits).toBe(1);
    store.decrement('k');
    expect(store.get('k')).toMatchObject({ totalHits: 1 });
    vi.setSystemTime(1_700_000_001_000);
    expect(store.get('k')).toBeUndefined();
    expect(store.increment('k')).toMatchObject({ totalHits: 1, resetTime: new Date(1_700_000_002_000) });
    store.resetKey('k');
    expect(store.get('k')).toBeUndefined();
    store.resetAll();
    expect(store.get('other')).toBeUndefined();
  });
});

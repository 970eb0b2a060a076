import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore } from 'express-rate-limit';
import { MemoryStorage, staticKeys, type NewMessage, type SmsRouterOptions } from '../../src/index.js';
import { MemoryBudgetStore } from '../../src/http/rate-limit/budget-store.js';
import { MemoryRateLimitStore, OptionError } from '../../src/index.js';
import { createGateway, DISABLED_KEY, KEY, OTHER_KEY, testKeys, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.sms.close();
  gateway = undefined;
  vi.useRealTimers();
});

const SLOW_KEY = 'test-key-slow-principal';
/** The test keys plus one principal with its own request limit of 2. */
const keysWithSlow = staticKeys([{ key: SLOW_KEY, id: 'slow', profiles: ['12345'], rateLimit: 2 }]);
const verifyKey: SmsRouterOptions['verifyKey'] = async (key) => (await testKeys(key)) ?? keysWithSlow(key);

function start(options: Partial<SmsRouterOptions>): TestGateway {
  gateway = createGateway(options);
  return gateway;
}

const messages = (count: number, externalId: string) =>
  Array.from({ length: count }, (_, i) => ({ recipient: `2547${String(10_000_000 + i)}`, message: 'Hi', external_id: externalId }));

function send(app: TestGateway['app'], key: string | null, count = 1, externalId = 'rl-1', ip?: string) {
  const req = request(app).post('/api/outbox/create');
  if (key !== null) req.set('X-API-Key', key);
  if (ip !== undefined) req.set('X-Forwarded-For', ip);
  return req.send({ profile_code: '12345', messages: messages(count, externalId) });
}

function statusQuery(app: TestGateway['app'], key: string, ip?: string) {
  const req = request(app).get('/api/outbox/delivery-status?external_id=none').set('X-API-Key', key);
  if (ip !== undefined) req.set('X-Forwarded-For', ip);
  return req;
}

/** The 429 of every limiter: exactly `{ details, code: 'RATE_LIMITED' }`, JSON, Retry-After, no legacy headers. */
function expect429(res: request.Response, details: RegExp, maxRetrySeconds: number) {
  expect(res.status).toBe(429);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(JSON.parse(res.text))).toEqual(['details', 'code']);
  expect(res.body.code).toBe('RATE_LIMITED');
  expect(res.body.details).toMatch(details);
  const retry = Number(res.headers['retry-after']);
  expect(Number.isInteger(retry)).toBe(true);
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(retry).toBeLessThanOrEqual(maxRetrySeconds);
  expectNoLegacyHeaders(res);
}

function expectNoLegacyHeaders(res: request.Response) {
  expect(Object.keys(res.headers).filter((name) => name.startsWith('x-ratelimit'))).toEqual([]);
}

/** The `"name"` entry of a draft-8 header list such as `"requests"; r=2; t=60, "messages"; r=9; t=60`. */
function policy(res: request.Response, header: 'ratelimit' | 'ratelimit-policy', name: string): string | undefined {
  const value = res.headers[header] as string | undefined;
  return value?.split(/,\s*(?=")/).find((entry) => entry.startsWith(`"${name}"`));
}

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

describe('the per-key message budget', () => {
  /** MemoryStorage that records every insert, to show a refused request stored nothing. */
  function recordingStorage() {
    const storage = new MemoryStorage();
    const inserts: number[] = [];
    const insert = storage.insertMessages.bind(storage);
    storage.insertMessages = async (batch: readonly NewMessage[], lease) => {
      inserts.push(batch.length);
      return insert(batch, lease);
    };
    return { storage, inserts };
  }

  async function lookup(app: TestGateway['app'], externalId: string): Promise<unknown[]> {
    const res = await request(app).get(`/api/outbox/delivery-status?external_id=${externalId}`).set('X-API-Key', KEY);
    expect(res.status).toBe(200);
    return res.body as unknown[];
  }

  it('refuses with 429 a 1,000-message request that would go over what is left, and stores none of it', async () => {
    const { storage, inserts } = recordingStorage();
    const { app } = start({ storage, rateLimit: { messages: { limit: 1500, windowMs: 3_600_000 }, headers: 'always' } });
    const first = await send(app, KEY, 600, 'first');
    expect(first.status).toBe(200);
    expect(policy(first, 'ratelimit', 'messages')).toMatch(/^"messages"; r=900; t=(3599|3600)$/);

    const over = await send(app, KEY, 1000, 'over');
    expect429(over, /^Message budget exceeded: 1000 messages asked, 900 of 1500 left per 1 hour; retry in \d+ s$/, 3600);
    expect(policy(over, 'ratelimit', 'messages')).toMatch(/^"messages"; r=900; t=\d+$/);
    expect(policy(over, 'ratelimit-policy', 'messages')).toMatch(/^"messages"; q=1500; w=3600; /);
    expect(inserts).toEqual([600]);
    expect(await lookup(app, 'over')).toEqual([]);

    // The refusal took nothing: exactly what is left still fits, and then nothing more does.
    expect((await send(app, KEY, 900, 'rest')).status).toBe(200);
    expect((await send(app, KEY, 1, 'one-more')).status).toBe(429);
    expect(inserts).toEqual([600, 900]);
    // Budgets are per key.
    expect((await statusQuery(app, OTHER_KEY)).status).toBe(200);
  });

  it('refuses with 422 a request larger than the whole budget, which no wait would let through', async () => {
    const { storage, inserts } = recordingStorage();
    const { app } = start({ storage, rateLimit: { messages: { limit: 500 }, headers: 'always' } });
    const res = await send(app, KEY, 1000, 'huge');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ details: 'messages: 1000 messages are more than this key may send per 1 minute (500); split the request', code: 'VALIDATION_FAILED' });
    expect(res.headers['retry-after']).toBeUndefined();
    expect(inserts).toEqual([]);
    expect(await lookup(app, 'huge')).toEqual([]);
    // Nothing was taken from the budget either.
    const full = await send(app, KEY, 500, 'fits');
    expect(full.status).toBe(200);
    expect(policy(full, 'ratelimit', 'messages')).toMatch(/^"messages"; r=0; /);
  });

  it('is checked after validation: an invalid request is a 422 and costs no budget', async () => {
    const { app } = start({ rateLimit: { messages: { limit: 2 } } });
    const invalid = await request(app).post('/api/outbox/create').set('X-API-Key', KEY)
      .send({ profile_code: '12345', messages: [{ recipient: '+254712345678', message: 'x' }] });
    expect(invalid.status).toBe(422);
    const unknownProfile = await request(app).post('/api/outbox/create').set('X-API-Key', KEY)
      .send({ profile_code: '99999', messages: messages(2, 'p') });
    expect(unknownProfile.body).toEqual({ details: 'Invalid Profile Code', code: 'INVALID_PROFILE' });
    expect((await send(app, KEY, 2)).status).toBe(200);
  });

  // docs/rate-limits.md: the budget counts the messages stored. A client retrying a 402
  // must not drain its budget into a 429 with messages that were never stored.
  it('gives back what a request refused after the charge took: four 402s leave the budget whole', async () => {
    const { app, sms } = start({ credit: { ledger: 'storage' }, rateLimit: { messages: { limit: 8 }, headers: 'always' } });
    for (let i = 0; i < 4; i++) {
      const refused = await send(app, KEY, 2, 'no-credit');
      expect(refused.status).toBe(402);
      expect(policy(refused, 'ratelimit', 'messages')).toMatch(/^"messages"; r=8; t=\d+$/);
    }
    expect(await lookup(app, 'no-credit')).toEqual([]);
    await sms.credit!.topUp('acme', 8);
    const whole = await send(app, KEY, 8, 'paid');
    expect(whole.status).toBe(200);
    expect(policy(whole, 'ratelimit', 'messages')).toMatch(/^"messages"; r=0; /);
  });

  it('gives back what a request took when storing it failed (500)', async () => {
    const storage = new MemoryStorage();
    const insert = storage.insertMessages.bind(storage);
    let failNext = true;
    storage.insertMessages = async (...args: Parameters<MemoryStorage['insertMessages']>) => {
      if (failNext) {
        failNext = false;
        throw new Error('disk full');
      }
      return insert(...args);
    };
    const { app, sms } = start({ storage, rateLimit: { messages: { limit: 3 } } });
    sms.on('error', () => undefined);
    expect((await send(app, KEY, 3, 'lost')).status).toBe(500);
    expect((await send(app, KEY, 3, 'kept')).status).toBe(200);
    expect((await send(app, KEY, 1, 'over')).status).toBe(429);
  });

  it('keeps the count of a host store without giveBack, as its contract allows', async () => {
    const store = new MemoryBudgetStore();
    const takeOnly = { take: store.take.bind(store) };
    const { app } = start({ credit: { ledger: 'storage' }, rateLimit: { messages: { limit: 4 }, budgetStore: takeOnly } });
    expect((await send(app, KEY, 2, 'no-credit')).status).toBe(402);
    expect((await send(app, KEY, 2, 'no-credit')).status).toBe(402);
    expect((await send(app, KEY, 1, 'no-credit')).status).toBe(429);
  });

  it('answers 500 and reports the cause when the budget store fails, storing nothing', async () => {
    const { storage, inserts } = recordingStorage();
    const failure = new Error('budget backend down');
    const { app, sms } = start({
      storage,
      rateLimit: { budgetStore: { take: async () => Promise.reject(failure) } },
    });
    const errors: unknown[] = [];
    sms.on('error', ({ error }) => errors.push(error));
    const res = await send(app, KEY, 2);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ details: '500 server-error', code: 'SERVER_ERROR' });
    expect(errors).toEqual([failure]);
    expect(inserts).toEqual([]);
  });
});

describe('MemoryBudgetStore', () => {
  it('adds a batch only when all of it fits, and starts again when the window ends', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_700_000_000_000);
    const store = new MemoryBudgetStore();
    expect(await store.take('k', 7, 10, 1000)).toEqual({ taken: true, used: 7, resetTime: new Date(1_700_000_001_000) });
    expect(await store.take('k', 4, 10, 1000)).toEqual({ taken: false, used: 7, resetTime: new Date(1_700_000_001_000) });
    expect((await store.take('other', 10, 10, 1000)).taken).toBe(true);
    expect(await store.take('k', 3, 10, 1000)).toMatchObject({ taken: true, used: 10 });
    vi.setSystemTime(1_700_000_001_000);
    expect(await store.take('k', 4, 10, 1000)).toEqual({ taken: true, used: 4, resetTime: new Date(1_700_000_002_000) });
    await store.reset('k');
    expect((await store.take('k', 10, 10, 1000)).used).toBe(10);
  });
});

describe('MemoryBudgetStore.giveBack', () => {
  it('takes messages back off the running window, never below 0, and starts no window', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_700_000_000_000);
    const store = new MemoryBudgetStore();
    store.take('k', 7, 10, 1000);
    store.giveBack('k', 4);
    expect(store.take('k', 7, 10, 1000)).toMatchObject({ taken: true, used: 10 });
    store.giveBack('k', 20);
    expect(store.take('k', 0, 10, 1000)).toMatchObject({ used: 0 });
    store.giveBack('nobody', 3);
    expect(store.take('nobody', 10, 10, 1000)).toMatchObject({ taken: true, used: 10 });
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

describe('rateLimit options', () => {
  it('rateLimit: false turns every limit off', async () => {
    const app = (() => {
      const { app: built } = start({ rateLimit: false });
      built.set('trust proxy', 'loopback');
      return built;
    })();
    for (let i = 0; i < 25; i++) expect((await send(app, `wrong-${i}`, 1, 'x', '203.0.113.99')).status).toBe(401);
    const ok = await send(app, KEY, 1000, 'x', '203.0.113.99');
    expect(ok.status).toBe(200);
    expect(ok.headers['ratelimit']).toBeUndefined();
    expect(ok.headers['ratelimit-policy']).toBeUndefined();
  });

  it('a limiter set to false is off while the others stay on', async () => {
    const { app } = start({ rateLimit: { requests: false, messages: { limit: 5 }, headers: 'always' } });
    const res = await send(app, KEY, 5);
    expect(res.status).toBe(200);
    expect(policy(res, 'ratelimit', 'requests')).toBeUndefined();
    expect(policy(res, 'ratelimit', 'messages')).toMatch(/^"messages"; r=0; /);
  });

  it('throws at construction for an unknown or bad option, with a hint', () => {
    const make = (rateLimit: unknown) => () => createGateway({ rateLimit: rateLimit as SmsRouterOptions['rateLimit'] });
    expect(make({ request: {} })).toThrow(new OptionError('rateLimit: unknown option `request`. Did you mean `requests`?', 'UNKNOWN_OPTION'));
    expect(make({ requests: { limt: 5 } })).toThrow(new OptionError('rateLimit.requests: unknown option `limt`. Did you mean `limit`?', 'UNKNOWN_OPTION'));
    expect(make({ failedAuth: { windowMS: 5 } })).toThrow(/Did you mean `windowMs`\?/);
    expect(make({ requests: { limit: -1 } })).toThrow(/rateLimit\.requests\.limit must be an integer >= 0/);
    expect(make({ messages: { windowMs: 0 } })).toThrow(/rateLimit\.messages\.windowMs must be an integer >= 1/);
    expect(make({ failedAuth: { limit: 0 } })).toThrow(/rateLimit\.failedAuth\.limit must be an integer >= 1/);
    expect(make({ failedAuth: { ipv6Subnet: 128 } })).toThrow(/ipv6Subnet must be at most 64/);
    expect(make({ store: new MemoryStore() })).toThrow(/rateLimit\.store must be a function/);
    expect(make({ budgetStore: {} })).toThrow(/rateLimit\.budgetStore must be a BudgetStore/);
    expect(make({ headers: 'sometimes' })).toThrow(/rateLimit\.headers must be 'refused' or 'always'/);
    expect(make('yes')).toThrow(/rateLimit must be an object or false/);
    const shared = new MemoryStore();
    expect(make({ store: () => shared })).toThrow(/must return a new Store for each limiter/);
    expect(make({ store: () => ({}) })).toThrow(/rateLimit\.store\("failed-auth"\) must return an express-rate-limit Store/);
  });

  it('uses a store per limiter from the host factory', async () => {
    const names: string[] = [];
    const { app } = start({
      rateLimit: {
        requests: { limit: 1 },
        store: (name) => {
          names.push(name);
          return new MemoryStore();
        },
      },
    });
    expect(names.sort()).toEqual(['failed-auth', 'requests']);
    expect((await send(app, KEY)).status).toBe(200);
    expect((await send(app, KEY)).status).toBe(429);
  });
});

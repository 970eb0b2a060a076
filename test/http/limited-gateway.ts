/**
 * The gateway and the requests the rate-limit tests share: a router built per test and
 * closed after it, a quick send and a status query (optionally from a given address), and
 * the checks every 429 and every draft-8 RateLimit header must pass.
 */
import request from 'supertest';
import { afterEach, expect, vi } from 'vitest';
import { staticKeys, type SmsRouterOptions } from '../../src/index.js';
import { createGateway, testKeys, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway | undefined;

/**
 * Closes the gateway each test started and gives back the real clock; called once at the
 * top of each rate-limit test file, so no router outlives its test.
 */
export function closeGatewayAfterEach(): void {
  afterEach(async () => {
    await gateway?.sms.close();
    gateway = undefined;
    vi.useRealTimers();
  });
}

/** The key of the principal whose own request limit is 2. */
export const SLOW_KEY = 'test-key-slow-principal';
/** The test keys plus one principal with its own request limit of 2. */
const keysWithSlow = staticKeys([{ key: SLOW_KEY, id: 'slow', profiles: ['12345'], rateLimit: 2 }]);
/** The test keys' check, then the slow principal's. */
export const verifyKey: SmsRouterOptions['verifyKey'] = async (key) => (await testKeys(key)) ?? keysWithSlow(key);

/** Builds the gateway of the running test, closed after it. */
export function start(options: Partial<SmsRouterOptions>): TestGateway {
  gateway = createGateway(options);
  return gateway;
}

/** `count` quick messages, all with `externalId`. */
export const messages = (count: number, externalId: string) =>
  Array.from({ length: count }, (_, i) => ({ recipient: `2547${String(10_000_000 + i)}`, message: 'Hi', external_id: externalId }));

/** A quick send of `count` messages with `key` (none when null), from `ip` when given. */
export function send(app: TestGateway['app'], key: string | null, count = 1, externalId = 'rl-1', ip?: string) {
  const req = request(app).post('/api/outbox/create');
  if (key !== null) req.set('X-API-Key', key);
  if (ip !== undefined) req.set('X-Forwarded-For', ip);
  return req.send({ profile_code: '12345', messages: messages(count, externalId) });
}

/** A delivery-status query with `key`, from `ip` when given. */
export function statusQuery(app: TestGateway['app'], key: string, ip?: string) {
  const req = request(app).get('/api/outbox/delivery-status?external_id=none').set('X-API-Key', key);
  if (ip !== undefined) req.set('X-Forwarded-For', ip);
  return req;
}

/** The 429 of every limiter: exactly `{ details, code: 'RATE_LIMITED' }`, JSON, Retry-After, no legacy headers. */
export function expect429(res: request.Response, details: RegExp, maxRetrySeconds: number) {
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

/** No `X-RateLimit-*` header: only the draft-8 ones are sent. */
export function expectNoLegacyHeaders(res: request.Response) {
  expect(Object.keys(res.headers).filter((name) => name.startsWith('x-ratelimit'))).toEqual([]);
}

/** The `"name"` entry of a draft-8 header list such as `"requests"; r=2; t=60, "messages"; r=9; t=60`. */
export function policy(res: request.Response, header: 'ratelimit' | 'ratelimit-policy', name: string): string | undefined {
  const value = res.headers[header] as string | undefined;
  return value?.split(/,\s*(?=")/).find((entry) => entry.startsWith(`"${name}"`));
}

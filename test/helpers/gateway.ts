/**
 * Builds a host app with the router in one line, for supertest.
 */
import express, { type Express, type RequestHandler } from 'express';
import request from 'supertest';
import { leakProblem } from './no-leak.js';
import { recordAnswers } from './answers.js';
import { createSmsRouter, SimulatorDelivery, staticKeys, type SmsRouter, type SmsRouterOptions } from '../../src/index.js';

/** A key with both scopes and the demo profiles. */
export const KEY = 'test-key-both-scopes';
/** A key with the quick scope only. */
export const QUICK_ONLY_KEY = 'test-key-quick-only';
/** A disabled key. */
export const DISABLED_KEY = 'test-key-disabled';
/** A key of another principal, owning profile 99999 only. */
export const OTHER_KEY = 'test-key-other-principal';

/** A key that expired in 2000. */
export const EXPIRED_KEY = 'test-key-expired';
/** A key that may send through the quick endpoint and do nothing else (no read, no cancel). */
export const SEND_ONLY_KEY = 'test-key-send-only';
/** A key that may be used from 192.0.2.0/24 only, so not by a test client on the loopback. */
export const FENCED_KEY = 'test-key-fenced';

/** A key whose principal may send 0 SMS units a day: every send is refused 429 `SPEND_CAP_REACHED`. */
export const CAPPED_KEY = 'test-key-capped';

/** The test principals. */
export const testKeys = staticKeys([
  { key: KEY, id: 'acme', profiles: ['12345', '22021501'], scopes: ['quick', 'premium'] },
  { key: QUICK_ONLY_KEY, id: 'quick-co', profiles: ['12345'], scopes: ['quick'] },
  { key: DISABLED_KEY, id: 'gone', profiles: ['12345'], disabled: true },
  { key: OTHER_KEY, id: 'other', profiles: ['99999'] },
  { key: EXPIRED_KEY, id: 'lapsed', expiresAt: '2000-01-01T00:00:00Z' },
  { key: SEND_ONLY_KEY, id: 'send-only', scopes: ['send:quick'] },
  { key: FENCED_KEY, id: 'fenced', allowedIps: ['192.0.2.0/24'] },
  { key: CAPPED_KEY, id: 'capped', profiles: ['12345'], dailyUnits: 0 },
]);

/** A gateway under test. */
export interface TestGateway {
  app: Express;
  sms: SmsRouter;
}

/**
 * Creates the router (fast deterministic simulator, test keys) mounted on a fresh Express
 * app at `mount`, with a host route after it that answers what falls through.
 */
export function createGateway(options: Partial<SmsRouterOptions> = {}, mount = '/'): TestGateway {
  const sms = createSmsRouter({
    verifyKey: testKeys,
    delivery: new SimulatorDelivery({ seed: 7, latencyMs: [1, 10] }),
    worker: { pollIntervalMs: 20 },
    ...options,
  });
  const app = express();
  app.use(recordAnswers(documentOptions(options, mount)));
  app.use(guardErrorBodies);
  app.use(mount, sms);
  app.use((_req, res) => {
    res.locals.fellThrough = true;
    res.status(404).json({ host: 'fell through' });
  });
  return { app, sms };
}

/**
 * Sends one message through the quick endpoint of `app` (mounted at `/`) with the
 * both-scopes key and expects it accepted: for tests about what follows an accepted send.
 */
export function quickSend(app: Express) {
  return request(app)
    .post('/api/outbox/create')
    .set('X-API-Key', KEY)
    .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Hi' }] })
    .expect(200);
}

/**
 * What the document of a router built with `options` and mounted at `mount` is built from,
 * as the router serves it: every answer of the gateway is checked against it
 * (`answers.ts`, failing the test as the setup file `test/setup/answer-guard.ts` says).
 */
function documentOptions(options: Partial<SmsRouterOptions>, mount: string) {
  const base = (options.basePath ?? '/api/outbox').replace(/\/+$/, '');
  const rateLimit = options.rateLimit;
  return {
    basePath: `${mount.replace(/\/+$/, '')}${base}`,
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    rateLimitHeaders: rateLimit === false || rateLimit === undefined ? ('refused' as const) : (rateLimit.headers ?? 'refused'),
  };
}

/**
 * Error answers of every gateway built here that leaked an internal detail. A setup file
 * (`test/setup/no-leak-guard.ts`) fails the test during which one was recorded, so every
 * test of the suite checks every error body it causes, not only the tests that look.
 */
export const leakedAnswers: string[] = [];

/** Records each router error answer (status >= 400) whose body fails `leakProblem`. */
const guardErrorBodies: RequestHandler = (req, res, next) => {
  const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
  res.end = ((...args: unknown[]) => {
    const [body] = args;
    if (res.statusCode >= 400 && res.locals.fellThrough !== true && (typeof body === 'string' || Buffer.isBuffer(body))) {
      const problem = leakProblem(body.toString(), res.statusCode);
      if (problem !== null) leakedAnswers.push(`${req.method} ${req.originalUrl} -> ${res.statusCode}: ${problem}`);
    }
    return end(...args);
  }) as typeof res.end;
  next();
};

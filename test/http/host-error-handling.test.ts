/**
 * What the host's own error handling sees of the router's failures: with `serverErrors:
 * 'next'` the unexpected ones reach its error middleware through `next(error)`; in every
 * case the `error` event hears of them, and host middleware after the router never runs on
 * a request the router answered.
 */
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createSmsRouter, MemoryStorage, OptionError, SimulatorDelivery, type SmsRouter, type SmsRouterOptions } from '../../src/index.js';
import { KEY, testKeys } from '../helpers/gateway.js';

const REF = '019abc12-3456-7def-8123-456789abcdef';

/** A storage whose lookups fail, as a database that went away would. */
class BrokenLookups extends MemoryStorage {
  override async getMessage(): Promise<never> {
    throw new Error('connection terminated');
  }
}

interface Host {
  app: express.Express;
  sms: SmsRouter;
  /** The errors the router's `error` event carried. */
  events: unknown[];
  /** The errors the host's error middleware was given, with whether the answer was out. */
  hostErrors: { error: unknown; headersSent: boolean }[];
  /** Paths that reached the host's middleware after the router. */
  after: string[];
}

let sms: SmsRouter | undefined;
afterEach(async () => {
  await sms?.close();
  sms = undefined;
});

/**
 * A host app: `before` (if any), the router, a host middleware that answers what falls
 * through, and the host's error middleware, which answers 503 text when the answer is not out.
 */
function host(options: Partial<SmsRouterOptions>, before?: RequestHandler): Host {
  sms = createSmsRouter({
    verifyKey: testKeys,
    storage: new BrokenLookups(),
    delivery: new SimulatorDelivery({ seed: 7, latencyMs: [1, 2] }),
    rateLimit: false,
    ...options,
  });
  const events: unknown[] = [];
  const hostErrors: Host['hostErrors'] = [];
  const after: string[] = [];
  sms.on('error', ({ error }) => events.push(error));
  const app = express();
  if (before) app.use(before);
  app.use(sms);
  app.use((req, res) => {
    after.push(req.path);
    if (!res.headersSent) res.status(404).send('host 404');
  });
  const hostErrorHandler: ErrorRequestHandler = (error, _req, res, next) => {
    hostErrors.push({ error, headersSent: res.headersSent });
    if (res.headersSent) {
      next(error);
      return;
    }
    res.status(503).type('text/plain').send('host error page');
  };
  app.use(hostErrorHandler);
  return { app, sms, events, hostErrors, after };
}

const lookup = (app: express.Express) => request(app).get(`/api/outbox/delivery-status/${REF}`).set('X-API-Key', KEY);

describe('an unexpected error', () => {
  it("is answered by the router's JSON 500 by default; the host's error middleware is not asked", async () => {
    const h = host({});
    const res = await lookup(h.app);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ details: '500 server-error', code: 'SERVER_ERROR' });
    expect(h.events).toHaveLength(1);
    expect(h.hostErrors).toEqual([]);
    expect(h.after).toEqual([]);
  });

  it("with serverErrors: 'next', reaches the host's error middleware as the same error, and the error event", async () => {
    const h = host({ serverErrors: 'next' });
    const res = await lookup(h.app);
    expect(res.status).toBe(503);
    expect(res.text).toBe('host error page');
    expect(h.hostErrors).toHaveLength(1);
    expect((h.hostErrors[0]!.error as Error).message).toBe('connection terminated');
    expect(h.hostErrors[0]!.headersSent).toBe(false);
    expect(h.events).toEqual([h.hostErrors[0]!.error]);
    expect(h.after).toEqual([]);
  });

  it("with serverErrors: 'next', a refusal of the registry is still the router's own JSON answer", async () => {
    const h = host({ serverErrors: 'next' });
    const res = await request(h.app).get(`/api/outbox/delivery-status/${REF}`).set('X-API-Key', 'wrong');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('INVALID_API_KEY');
    expect(h.hostErrors).toEqual([]);
    expect(h.events).toEqual([]);
  });
});

describe('an error after the answer was sent', () => {
  /** A host middleware whose `res.end` fails once the body has gone out. */
  const failsAfterEnd: RequestHandler = (_req, res, next) => {
    const end = res.end.bind(res) as (...args: unknown[]) => express.Response;
    res.end = ((...args: unknown[]) => {
      end(...args);
      throw new Error('after the answer');
    }) as typeof res.end;
    next();
  };

  it('runs no host middleware after the router, and reaches the error event', async () => {
    const h = host({ storage: new MemoryStorage() }, failsAfterEnd);
    const res = await request(h.app).get('/api/outbox/delivery-status?external_id=none').set('X-API-Key', KEY);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
    expect(h.events.map((error) => (error as Error).message)).toEqual(['after the answer']);
    expect(h.after).toEqual([]);
    expect(h.hostErrors).toEqual([]);
  });

  it("with serverErrors: 'next', reaches the host's error middleware, which sees the answer is out", async () => {
    const h = host({ storage: new MemoryStorage(), serverErrors: 'next' }, failsAfterEnd);
    const res = await request(h.app).get('/api/outbox/delivery-status?external_id=none').set('X-API-Key', KEY);
    expect(res.status).toBe(200);
    expect(h.after).toEqual([]);
    expect(h.hostErrors.map(({ error, headersSent }) => [(error as Error).message, headersSent])).toEqual([['after the answer', true]]);
    expect(h.events).toHaveLength(1);
  });
});

describe('an error once the answer has started', () => {
  /** A host middleware whose `res.end` fails after the headers went out, before the body. */
  const failsMidAnswer: RequestHandler = (_req, res, next) => {
    res.end = (() => {
      res.flushHeaders();
      throw new Error('cut short');
    }) as typeof res.end;
    next();
  };

  it('ends the connection, so the client sees the answer fail rather than wait for it', async () => {
    const h = host({ storage: new MemoryStorage() }, failsMidAnswer);
    const outcome = await request(h.app)
      .get('/api/outbox/delivery-status?external_id=none')
      .set('X-API-Key', KEY)
      .timeout(5_000)
      .then(
        () => 'answered',
        (error: { code?: string; timeout?: number }) => (error.timeout === undefined ? 'connection ended' : 'timed out'),
      );
    expect(outcome).toBe('connection ended');
    expect(h.events.map((error) => (error as Error).message)).toEqual(['cut short']);
    expect(h.after).toEqual([]);
  });
});

describe('the serverErrors option', () => {
  it('is refused at construction when it is neither answer nor next', () => {
    for (const bad of ['throw', true, null]) {
      expect(() => createSmsRouter({ verifyKey: testKeys, serverErrors: bad as never })).toThrow(OptionError);
    }
    expect(() => createSmsRouter({ verifyKey: testKeys, serverErrors: 'throw' as never })).toThrow(/`serverErrors` must be 'answer' or 'next', got "throw"/);
  });
});

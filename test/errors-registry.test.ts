import { readFileSync } from 'node:fs';
import express, { type Express } from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import {
  createSmsRouter,
  ERRORS,
  EVENT_ERRORS,
  EventError,
  MemoryStorage,
  OPTION_ERRORS,
  OptionError,
  staticKeys,
  type ErrorCode,
  type ErrorEvent,
  type SmsRouterOptions,
} from '../src/index.js';
import { CAPPED_KEY, createGateway, DISABLED_KEY, EXPIRED_KEY, FENCED_KEY, KEY, OTHER_KEY, QUICK_ONLY_KEY, SEND_ONLY_KEY } from './helpers/gateway.js';
import { GatedDelivery } from './helpers/gated-delivery.js';
import { recordAnswers } from './helpers/answers.js';

describe('the error registry', () => {
  it('is documented in the README table, code by code, with its status and details', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const rows = new Map<string, { status: number; text: string }>();
    for (const match of readme.matchAll(/^\| (\d{3}) \| `([A-Z_]+)` \| (.*) \|$/gm)) {
      rows.set(match[2]!, { status: Number(match[1]), text: match[3]! });
    }
    expect([...rows.keys()].sort()).toEqual(Object.keys(ERRORS).sort());
    for (const [code, entry] of Object.entries(ERRORS)) {
      const row = rows.get(code)!;
      expect(row.status, code).toBe(entry.status);
      // Fixed texts are quoted verbatim; dynamic ones (validation, sizes, methods) are described.
      const dynamic = ['VALIDATION_FAILED', 'INVALID_RECIPIENT', 'NOT_MOBILE', 'BODY_TOO_LARGE', 'SCOPE_DENIED', 'METHOD_NOT_ALLOWED', 'RATE_LIMITED', 'SERVER_ERROR', 'QUEUE_FULL', 'BACKLOG_FULL', 'INVALID_LIST_QUERY', 'INVALID_REPLAY'];
      if (!dynamic.includes(code)) {
        expect(row.text, code).toContain(`\`${entry.details}\``);
      }
    }
  });
});

/** How a client meets each code of the registry: the router options, then the requests (the last one's answer counts). */
const TRIGGERS: Record<ErrorCode, { options?: Partial<SmsRouterOptions>; ask: (app: Express) => Promise<request.Response> }> = {
  INVALID_JSON: { ask: (app) => send(app, 'create', KEY, '{"profile_code": ') },
  MISSING_API_KEY: { ask: (app) => send(app, 'create', null, valid()) },
  INVALID_API_KEY: { ask: (app) => send(app, 'create', 'not-a-key', valid()) },
  KEY_DISABLED: { ask: (app) => send(app, 'create', DISABLED_KEY, valid()) },
  KEY_EXPIRED: { ask: (app) => send(app, 'create', EXPIRED_KEY, valid()) },
  IP_NOT_ALLOWED: { ask: (app) => send(app, 'create', FENCED_KEY, valid()) },
  SCOPE_DENIED: { ask: (app) => send(app, 'premium', QUICK_ONLY_KEY, valid()) },
  READ_SCOPE_DENIED: { ask: (app) => request(app).get('/api/outbox/delivery-status/nope').set('X-API-Key', SEND_ONLY_KEY) },
  CANCEL_SCOPE_DENIED: { ask: (app) => request(app).delete('/api/outbox/messages/nope').set('X-API-Key', SEND_ONLY_KEY) },
  PREVIEW_SCOPE_DENIED: { ask: (app) => send(app, 'create/preview', SEND_ONLY_KEY, valid()) },
  // The 0.1.0 aliases do not grant replays.
  CALLBACKS_SCOPE_DENIED: { ask: (app) => request(app).post('/api/outbox/callbacks/replay').set('X-API-Key', KEY).send({ ids: ['nope'] }) },
  INVALID_REPLAY: { ask: (app) => request(app).post('/api/outbox/callbacks/replay').set('X-API-Key', OTHER_KEY).send({ ids: [] }) },
  NOT_FOUND: { ask: (app) => request(app).get('/api/outbox/delivery-status/nope').set('X-API-Key', KEY) },
  INVALID_CURSOR: { ask: (app) => request(app).get('/api/outbox/messages?cursor=nope').set('X-API-Key', KEY) },
  INVALID_LIST_QUERY: { ask: (app) => request(app).get('/api/outbox/messages?limit=0').set('X-API-Key', KEY) },
  METHOD_NOT_ALLOWED: { ask: (app) => request(app).delete('/api/outbox/create').set('X-API-Key', KEY) },
  // The storage's ledger, never topped up: the balance is 0.
  INSUFFICIENT_CREDIT: { options: { credit: { ledger: 'storage' } }, ask: (app) => send(app, 'create', KEY, valid()) },
  BODY_TOO_LARGE: { options: { limits: { maxBodyBytes: 100 } }, ask: (app) => send(app, 'create', KEY, valid('x'.repeat(200))) },
  UNSUPPORTED_MEDIA_TYPE: { ask: (app) => send(app, 'create', KEY, 'a=b', 'application/x-www-form-urlencoded') },
  INVALID_PROFILE: { ask: (app) => send(app, 'create', KEY, { ...valid(), profile_code: '00000' }) },
  VALIDATION_FAILED: { ask: (app) => send(app, 'create', KEY, { ...valid(), messages: [{ recipient: '+254712345678', message: 'x' }] }) },
  INVALID_RECIPIENT: { ask: (app) => send(app, 'create', KEY, { ...valid(), messages: [{ recipient: '254000000000', message: 'x' }] }) },
  // A London landline.
  NOT_MOBILE: { ask: (app) => send(app, 'create', KEY, { ...valid(), messages: [{ recipient: '442073238299', message: 'x' }] }) },
  RATE_LIMITED: {
    options: { rateLimit: { requests: { limit: 1, windowMs: 60_000 } } },
    ask: async (app) => (await send(app, 'create', KEY, valid()).expect(200), send(app, 'create', KEY, valid())),
  },
  QUEUE_FULL: {
    options: { delivery: new GatedDelivery('all'), worker: { concurrency: 1 }, backlog: { perKey: 1, total: 10, refreshMs: 1 } },
    ask: async (app) => (await send(app, 'create', KEY, valid()).expect(200), send(app, 'create', KEY, valid())),
  },
  SPEND_CAP_REACHED: { ask: (app) => send(app, 'create', CAPPED_KEY, valid()) },
  BACKLOG_FULL: {
    options: { delivery: new GatedDelivery('all'), worker: { concurrency: 1 }, backlog: { perKey: 10, total: 1, refreshMs: 1 } },
    ask: async (app) => (await send(app, 'create', KEY, valid()).expect(200), send(app, 'create', KEY, valid())),
  },
  INVALID_IDEMPOTENCY_KEY: { ask: (app) => send(app, 'create', KEY, valid()).set('Idempotency-Key', 'two words') },
  IDEMPOTENCY_CONFLICT: {
    ask: async (app) => (
      await send(app, 'create', KEY, valid()).set('Idempotency-Key', 'k-1').expect(200),
      send(app, 'create', KEY, valid('other')).set('Idempotency-Key', 'k-1')
    ),
  },
  IDEMPOTENCY_IN_FLIGHT: (() => {
    // The first request's insert waits until the second one was answered.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inserting = new Promise<void>((resolve) => (entered = resolve));
    const storage = new MemoryStorage();
    const insert = storage.insertMessages.bind(storage);
    storage.insertMessages = async (...args) => (entered(), await held, insert(...args));
    return {
      options: { storage },
      ask: async (app: Express) => {
        const first = send(app, 'create', KEY, valid()).set('Idempotency-Key', 'k-1').then((res) => res);
        await inserting;
        const second = await send(app, 'create', KEY, valid()).set('Idempotency-Key', 'k-1');
        release();
        expect((await first).status).toBe(200);
        return second;
      },
    };
  })(),
  SERVER_ERROR: {
    options: { storage: Object.assign(new MemoryStorage(), { insertMessages: () => Promise.reject(new Error('disk full')) }) },
    ask: (app) => send(app, 'create', KEY, valid()),
  },
};

function valid(message = 'hi') {
  return { profile_code: '12345', messages: [{ recipient: '254712345678', message }] };
}

function send(app: Express, endpoint: 'create' | 'premium' | 'create/preview', key: string | null, body: unknown, type = 'application/json') {
  const req = request(app).post(`/api/outbox/${endpoint}`).set('Content-Type', type);
  if (key !== null) req.set('X-API-Key', key);
  return req.send(typeof body === 'string' ? body : JSON.stringify(body));
}

describe('every code of the registry', () => {
  it.each(Object.keys(ERRORS) as ErrorCode[])('%s is answered by a gateway with its status, as { details, code }', async (code) => {
    const trigger = TRIGGERS[code];
    const { app, sms } = createGateway(trigger.options);
    sms.on('error', () => undefined);
    try {
      const res = await trigger.ask(app);
      expect(res.status).toBe(ERRORS[code].status);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(Object.keys(res.body)).toEqual(['details', 'code']);
      expect(res.body.code).toBe(code);
      expect(typeof res.body.details).toBe('string');
    } finally {
      const carrier = trigger.options?.delivery;
      if (carrier instanceof GatedDelivery) carrier.open();
      await sms.close();
    }
  });
});

describe('the option and error-event codes', () => {
  const docs = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  const documented = (after: string): Map<string, string> => {
    const section = docs.slice(docs.indexOf(after));
    const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| code |')));
    return new Map([...table.matchAll(/^\| `([A-Z_]+)` \| (.*) \|$/gm)].map((m) => [m[1]!, m[2]!]));
  };

  it('are documented in docs/errors.md, code by code', () => {
    expect([...documented('`OPTION_ERRORS`').keys()].sort()).toEqual(Object.keys(OPTION_ERRORS).sort());
    expect([...documented('`EVENT_ERRORS`').keys()].sort()).toEqual(Object.keys(EVENT_ERRORS).sort());
  });

  it('mark a bad option at construction with a code a host can match', () => {
    const verifyKey = staticKeys([{ key: 'k', id: 'acme', profiles: ['12345'] }]);
    const codeOf = (make: () => unknown): unknown => {
      try {
        make();
      } catch (error) {
        expect(error).toBeInstanceOf(TypeError);
        expect(error).toBeInstanceOf(OptionError);
        return (error as OptionError).code;
      }
      throw new Error('did not throw');
    };
    expect(codeOf(() => createSmsRouter({ verifyKey, limits: { maxSegment: 3 } } as never))).toBe('UNKNOWN_OPTION');
    expect(codeOf(() => createSmsRouter({ verifyKey, limits: { maxSegments: 0 } }))).toBe('INVALID_OPTION');
    expect(codeOf(() => createSmsRouter({ verifyKey, storage: MemoryStorage as never }))).toBe('INVALID_ADAPTER');
    expect(codeOf(() => staticKeys([{ key: 'k', id: 'a', scopes: ['quik' as never] }]))).toBe('INVALID_OPTION');
  });

  it('mark every error event with a code: the router’s own, or its source’s', async () => {
    const storage = new MemoryStorage();
    storage.getMessage = async () => {
      throw new Error('database down');
    };
    const sms = createSmsRouter({
      verifyKey: (key) => (key === 'odd' ? ('acme' as never) : key === 'k' ? { id: 'acme', profiles: ['12345'] } : null),
      storage,
      rateLimit: false,
    });
    const events: ErrorEvent[] = [];
    sms.on('error', (event) => events.push(event));
    sms.on('message.accepted', () => {
      throw new Error('listener bug');
    });
    const app = express().use(recordAnswers({ basePath: '/api/outbox' }), sms);
    await request(app).get('/api/outbox/delivery-status/0193a0c4-7b1e-7cc0-8000-000000000000').set('X-API-Key', 'k').expect(500);
    await request(app).get('/api/outbox/delivery-status/0193a0c4-7b1e-7cc0-8000-000000000000').set('X-API-Key', 'odd').expect(500);
    await request(app)
      .post('/api/outbox/create')
      .set('X-API-Key', 'k')
      .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'hi' }] })
      .expect(200);
    await sms.close();
    expect(events.map((e) => [e.source, e.code])).toEqual([
      ['request', 'REQUEST_FAILED'],
      ['request', 'VERIFY_KEY_RESULT'],
      ['listener', 'LISTENER_FAILED'],
    ]);
    expect(events[1]!.error).toBeInstanceOf(EventError);
    // A foreign error stays as it was thrown.
    expect((events[0]!.error as Error).message).toBe('database down');
  });
});

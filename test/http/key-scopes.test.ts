/**
 * Key scopes through the router: each permission lets its routes through and refuses the
 * others with a 403 whose code names what is missing; the names of 0.1.0 (`quick`,
 * `premium`, an empty list, no list) keep granting what they granted.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { hasScope, staticKeys, type ErrorCode, type RequestRejectedEvent, type Scope } from '../../src/index.js';
import { createGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.sms.close();
  gateway = undefined;
});

/** Each key's scopes, by the key (`none`: no `scopes` at all). */
const SCOPED: Record<string, readonly Scope[] | undefined> = {
  none: undefined,
  'send:quick': ['send:quick'],
  'send:premium': ['send:premium'],
  read: ['read'],
  cancel: ['cancel'],
  preview: ['preview'],
  quick: ['quick'],
  premium: ['premium'],
  'quick+premium': ['quick', 'premium'],
  empty: [],
  'send:quick+read': ['send:quick', 'read'],
};

const verifyKey = staticKeys(
  Object.entries(SCOPED).map(([key, scopes]) => ({ key, id: `p-${key}`, profiles: ['12345', '22021501'], ...(scopes === undefined ? {} : { scopes }) })),
);

/** A call of each route kind; what a key that may make it is answered (a lookup of no message is a 404, after the key check). */
const CALLS = {
  quick: {
    ask: (key: string) => request(gateway!.app).post('/api/outbox/create').set('X-API-Key', key)
      .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'hi' }] }),
    allowed: 200,
  },
  premium: {
    ask: (key: string) => request(gateway!.app).post('/api/outbox/premium').set('X-API-Key', key)
      .send({ profile_code: '22021501', messages: [{ mobile_number: '254712345678', message: 'hi' }] }),
    allowed: 200,
  },
  readByRef: { ask: (key: string) => request(gateway!.app).get('/api/outbox/delivery-status/no-such-ref').set('X-API-Key', key), allowed: 404 },
  readByExternalId: { ask: (key: string) => request(gateway!.app).get('/api/outbox/delivery-status?external_id=none').set('X-API-Key', key), allowed: 200 },
  cancelByRef: { ask: (key: string) => request(gateway!.app).delete('/api/outbox/messages/no-such-ref').set('X-API-Key', key), allowed: 404 },
  cancelByExternalId: { ask: (key: string) => request(gateway!.app).delete('/api/outbox/messages?external_id=none').set('X-API-Key', key), allowed: 404 },
} as const;
type Call = keyof typeof CALLS;

/** The refusal of each call for a key without its permission. */
const REFUSAL: Record<Call, { code: ErrorCode; details: string }> = {
  quick: { code: 'SCOPE_DENIED', details: 'API key may not use the quick endpoint' },
  premium: { code: 'SCOPE_DENIED', details: 'API key may not use the premium endpoint' },
  readByRef: { code: 'READ_SCOPE_DENIED', details: 'API key lacks the read scope' },
  readByExternalId: { code: 'READ_SCOPE_DENIED', details: 'API key lacks the read scope' },
  cancelByRef: { code: 'CANCEL_SCOPE_DENIED', details: 'API key lacks the cancel scope' },
  cancelByExternalId: { code: 'CANCEL_SCOPE_DENIED', details: 'API key lacks the cancel scope' },
};

const SEND_QUICK: Call[] = ['quick'];
const SEND_PREMIUM: Call[] = ['premium'];
const READ: Call[] = ['readByRef', 'readByExternalId'];
const CANCEL: Call[] = ['cancelByRef', 'cancelByExternalId'];

/** What each key may call; every other call is refused. */
const MAY: Record<keyof typeof SCOPED, Call[]> = {
  none: [...SEND_QUICK, ...SEND_PREMIUM, ...READ, ...CANCEL],
  'send:quick': SEND_QUICK,
  'send:premium': SEND_PREMIUM,
  read: READ,
  cancel: CANCEL,
  preview: [],
  // 0.1.0: a quick key could also read and cancel its messages, and so on.
  quick: [...SEND_QUICK, ...READ, ...CANCEL],
  premium: [...SEND_PREMIUM, ...READ, ...CANCEL],
  'quick+premium': [...SEND_QUICK, ...SEND_PREMIUM, ...READ, ...CANCEL],
  empty: [...READ, ...CANCEL],
  'send:quick+read': [...SEND_QUICK, ...READ],
};

describe('key scopes', () => {
  it.each(Object.keys(SCOPED))('key with scopes %s: its routes pass the key check, the others are refused naming the scope', async (key) => {
    gateway = createGateway({ verifyKey });
    const rejected: RequestRejectedEvent[] = [];
    gateway.sms.on('request.rejected', (event) => rejected.push(event));
    const answers: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    for (const [call, { ask, allowed }] of Object.entries(CALLS) as [Call, (typeof CALLS)[Call]][]) {
      const res = await ask(key);
      answers[call] = res.status === 403 ? { status: 403, ...res.body } : res.status;
      expected[call] = MAY[key]!.includes(call) ? allowed : { status: 403, details: REFUSAL[call].details, code: REFUSAL[call].code };
    }
    expect(answers).toEqual(expected);
    // A scope refusal names the key's owner in the event, as the key was verified.
    for (const event of rejected.filter((e) => e.status === 403)) expect(event.principalId).toBe(`p-${key}`);
  });

  it('is read the same from a verifier of the host, and a name it does not know grants nothing', async () => {
    gateway = createGateway({
      verifyKey: (key) => (key === 'reader' ? { id: 'r', scopes: ['read', 'send:everything' as Scope] } : null),
    });
    expect((await CALLS.readByRef.ask('reader')).status).toBe(404);
    expect((await CALLS.quick.ask('reader')).body.code).toBe('SCOPE_DENIED');
    expect((await CALLS.cancelByRef.ask('reader')).body.code).toBe('CANCEL_SCOPE_DENIED');
  });

  it('answers 500 and reports VERIFY_KEY_RESULT for a host principal whose scopes are not a list', async () => {
    gateway = createGateway({ verifyKey: () => ({ id: 'odd', scopes: 'quick' as never }) });
    const errors: unknown[] = [];
    gateway.sms.on('error', ({ code, error }) => errors.push([code, (error as Error).message]));
    expect((await CALLS.quick.ask('any')).status).toBe(500);
    expect(errors).toEqual([['VERIFY_KEY_RESULT', 'verifyKey returned a principal whose scopes must be an array, got a string']]);
  });

  it('hasScope answers for every scope, preview included (no route needs it yet), an alias asked as its send', () => {
    const of = (scopes?: Scope[]) => ({ id: 'x', ...(scopes === undefined ? {} : { scopes }) });
    expect(hasScope(of(['quick']), 'preview')).toBe(true);
    expect(hasScope(of(['premium']), 'preview')).toBe(true);
    expect(hasScope(of(['send:quick']), 'preview')).toBe(false);
    expect(hasScope(of(['preview']), 'preview')).toBe(true);
    expect(hasScope(of([]), 'preview')).toBe(false);
    expect(hasScope(of(), 'preview')).toBe(true);
    expect(hasScope(of(['send:quick']), 'quick')).toBe(true);
    expect(hasScope(of(['quick']), 'premium')).toBe(false);
    expect(hasScope(of(['premium']), 'send:premium')).toBe(true);
  });
});

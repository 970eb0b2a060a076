import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createSmsRouter, MemoryBudgetStore, MemoryStorage, OptionError, type Storage, type SmsRouterOptions } from '../../src/index.js';
import { outcome } from '../../src/lifecycle/states.js';
import { buildNewMessage } from '../../src/testing/storage-suite/index.js';
import { retentionSweep } from '../../src/worker/retention.js';
import { createGateway, KEY, OTHER_KEY, testKeys, type TestGateway } from '../helpers/gateway.js';
import { GatedDelivery } from '../helpers/gated-delivery.js';
import { eventually } from '../helpers/poll.js';

const gateways: TestGateway[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.sms.close();
});

function start(options: Partial<SmsRouterOptions> = {}): TestGateway {
  const gateway = createGateway(options);
  gateway.sms.on('error', () => undefined);
  gateways.push(gateway);
  return gateway;
}

const BODY = { profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Your code is 1234', external_id: 'otp-1' }] };

/** Posts `body` (an object, or JSON text sent as is) to `endpoint` with `key` as Idempotency-Key (none when null). */
function send(app: TestGateway['app'], key: string | null, body: unknown = BODY, apiKey = KEY, endpoint = 'create') {
  const req = request(app).post(`/api/outbox/${endpoint}`).set('X-API-Key', apiKey).set('Content-Type', 'application/json');
  if (key !== null) req.set('Idempotency-Key', key);
  return req.send(typeof body === 'string' ? body : JSON.stringify(body));
}

/** The messages stored under external id `externalId` for KEY's principal. */
async function stored(app: TestGateway['app'], externalId = 'otp-1', apiKey = KEY): Promise<unknown[]> {
  const res = await request(app).get(`/api/outbox/delivery-status?external_id=${externalId}`).set('X-API-Key', apiKey);
  return res.status === 404 ? [] : (res.body as unknown[]);
}

/** A storage whose inserts wait at a gate the test opens; `entered` resolves at the first insert. */
function gatedStorage(base: Storage = new MemoryStorage()) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let entered!: () => void;
  const inserting = new Promise<void>((resolve) => (entered = resolve));
  const insert = base.insertMessages.bind(base);
  base.insertMessages = async (...args) => {
    entered();
    await gate;
    return insert(...args);
  };
  return { storage: base, open, inserting };
}

describe('Idempotency-Key on the send endpoints', () => {
  it('replays the first answer byte for byte, marked Idempotent-Replayed, and stores and announces nothing more', async () => {
    const { app, sms } = start();
    const accepted: string[] = [];
    sms.on('message.accepted', ({ message }) => accepted.push(message.ref));
    const first = await send(app, 'order-17');
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // The same request, keys reordered and spaced out: the same request for the hash.
    const again = `{ "messages" : [ {"external_id":"otp-1", "message":"Your code is 1234","recipient":"254712345678"} ],\n "profile_code":"12345" }`;
    for (let i = 0; i < 3; i++) {
      const replay = await send(app, 'order-17', again);
      expect(replay.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.headers['content-type']).toBe(first.headers['content-type']);
      expect(replay.text).toBe(first.text);
    }
    expect(await stored(app)).toHaveLength(1);
    expect(accepted).toEqual([first.body[0].message_ref]);
  });

  it('replays on the premium endpoint too, and keeps each endpoint to its own requests', async () => {
    const { app } = start();
    const premium = { profile_code: '22021501', to: ['254712345678'], message: 'Hi', message_id: 'p-1' };
    const first = await send(app, 'prem-1', premium, KEY, 'premium');
    expect(first.status).toBe(200);
    const replay = await send(app, 'prem-1', premium, KEY, 'premium');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
    // The key names one request: the same key on the quick endpoint is another request.
    const other = await send(app, 'prem-1');
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('IDEMPOTENCY_CONFLICT');
  });

  it('answers 422 IDEMPOTENCY_CONFLICT for the same key with another body, and stores nothing', async () => {
    const { app } = start();
    await send(app, 'k-1').expect(200);
    const changed = { ...BODY, messages: [{ ...BODY.messages[0]!, external_id: 'otp-2' }] };
    const res = await send(app, 'k-1', changed);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ details: 'Idempotency-Key was already used for a different request', code: 'IDEMPOTENCY_CONFLICT' });
    expect(await stored(app, 'otp-2')).toEqual([]);
  });

  it("scopes a key to its principal: another key owner's same key is a request of its own", async () => {
    const { app } = start();
    const mine = await send(app, 'shared-key');
    const theirs = await send(app, 'shared-key', { ...BODY, profile_code: '99999' }, OTHER_KEY);
    expect(theirs.status).toBe(200);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body[0].message_ref).not.toBe(mine.body[0].message_ref);
  });

  it('answers 409 with Retry-After: 1 while the first request with the key is in flight, then replays it', async () => {
    const { storage, open, inserting } = gatedStorage();
    const { app } = start({ storage });
    const first = send(app, 'slow-1').then((res) => res);
    await inserting;
    const during = await send(app, 'slow-1');
    expect(during.status).toBe(409);
    expect(during.headers['retry-after']).toBe('1');
    expect(during.body.code).toBe('IDEMPOTENCY_IN_FLIGHT');
    open();
    const answered = await first;
    expect(answered.status).toBe(200);
    const after = await send(app, 'slow-1');
    expect(after.headers['idempotent-replayed']).toBe('true');
    expect(after.text).toBe(answered.text);
  });

  it('replays the answer of a request another instance stored with the key while this one was storing its own', async () => {
    // Two routers on one storage: both look the key up before either stored it.
    const { storage, open, inserting } = gatedStorage();
    const one = start({ storage, instanceId: 'one' });
    const two = start({ storage, instanceId: 'two' });
    const accepted: string[] = [];
    for (const { sms } of [one, two]) sms.on('message.accepted', ({ message }) => accepted.push(message.ref));
    const first = send(one.app, 'both').then((res) => res);
    await inserting;
    const second = send(two.app, 'both').then((res) => res);
    // Both requests wait at the storage's gate; the first insert in wins.
    await eventually(async () => (await storage.findIdempotency!('acme', 'both', Date.now())) === null && accepted.length === 0);
    open();
    const answers = await Promise.all([first, second]);
    expect(answers.map((res) => res.status)).toEqual([200, 200]);
    expect(answers[1]!.text).toBe(answers[0]!.text);
    expect(answers.filter((res) => res.headers['idempotent-replayed'] === 'true')).toHaveLength(1);
    expect(accepted).toHaveLength(1);
    expect(await stored(one.app)).toHaveLength(1);
  });

  it('gives the race loser\'s messages back to the shared message budget: it stored nothing', async () => {
    const { storage, open, inserting } = gatedStorage();
    const budgetStore = new MemoryBudgetStore();
    const rateLimit = { messages: { limit: 2 }, budgetStore };
    const one = start({ storage, instanceId: 'one', rateLimit });
    const two = start({ storage, instanceId: 'two', rateLimit });
    const first = send(one.app, 'raced').then((res) => res);
    await inserting;
    const second = send(two.app, 'raced').then((res) => res);
    // Both have taken their message from the budget and wait at the storage's gate.
    await eventually(() => budgetStore.take('acme', 0, 2, 60_000).used === 2, { what: 'both requests charged' });
    open();
    expect((await Promise.all([first, second])).map((res) => res.status)).toEqual([200, 200]);
    expect(await stored(one.app)).toHaveLength(1);
    // One message stored, one counted: room for exactly one more.
    const another = { ...BODY, messages: [{ ...BODY.messages[0]!, external_id: 'otp-2' }] };
    expect((await send(one.app, null, another)).status).toBe(200);
    expect((await send(two.app, null, another)).status).toBe(429);
  });

  it('frees the key after ttlMs: the same request is then sent again', async () => {
    let clock = 1_700_000_000_000;
    const { app } = start({ now: () => clock, idempotency: { ttlMs: 60_000 } });
    const first = await send(app, 'daily');
    clock += 59_999;
    expect((await send(app, 'daily')).headers['idempotent-replayed']).toBe('true');
    clock += 1;
    const later = await send(app, 'daily');
    expect(later.status).toBe(200);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(later.body[0].message_ref).not.toBe(first.body[0].message_ref);
    expect(await stored(app)).toHaveLength(2);
  });

  it('sweeps expired keys with the retention work, and only expired ones', async () => {
    let clock = 1_700_000_000_000;
    const storage = new MemoryStorage();
    const sweeps: number[] = [];
    const purge = storage.purgeIdempotency.bind(storage);
    storage.purgeIdempotency = async (now, limit) => {
      const purged = await purge(now, limit);
      sweeps.push(purged);
      return purged;
    };
    const { app } = start({ storage, now: () => clock, idempotency: { ttlMs: 1_000 }, retention: { intervalMs: 20 } });
    await send(app, 'old').expect(200);
    await send(app, 'young', { ...BODY, messages: [{ ...BODY.messages[0]!, external_id: 'otp-2' }] }).expect(200);
    clock += 500;
    await eventually(() => sweeps.length > 0);
    expect(sweeps.every((n) => n === 0)).toBe(true);
    clock += 500;
    await eventually(() => sweeps.some((n) => n === 2));
    expect(await storage.findIdempotency('acme', 'old', 0)).toBeNull();
  });

  it.each([
    ['a space', 'two words'],
    ['nothing', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a byte outside ASCII', 'caf\xe9'],
    ['two header lines', ['a', 'b']],
  ])('refuses a key with %s: 400 INVALID_IDEMPOTENCY_KEY, nothing stored', async (_name, key) => {
    const { app } = start();
    const req = request(app).post('/api/outbox/create').set('X-API-Key', KEY).set('Content-Type', 'application/json');
    // An array is sent as one header line per value.
    req.set('Idempotency-Key', key as string);
    const res = await req.send(JSON.stringify(BODY));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_IDEMPOTENCY_KEY');
    expect(await stored(app)).toEqual([]);
  });

  it('takes any key of 1 to 255 visible ASCII characters, quotes and punctuation included', async () => {
    const { app } = start();
    for (const key of ['x', '"8e03978e-40d5-43e8-bc93-6894a57f9324"', `${'~'.repeat(254)}!`]) {
      const body = { ...BODY, messages: [{ ...BODY.messages[0]!, external_id: `e-${key.length}` }] };
      expect((await send(app, key, body)).status).toBe(200);
      expect((await send(app, key, body)).headers['idempotent-replayed']).toBe('true');
    }
  });

  it('charges a replay to neither the request limit nor the message budget', async () => {
    const { app } = start({ rateLimit: { requests: { limit: 3, windowMs: 60_000 }, messages: { limit: 2, windowMs: 60_000 } } });
    const first = await send(app, 'paid-once');
    for (let i = 0; i < 5; i++) expect((await send(app, 'paid-once')).text).toBe(first.text);
    // One request and one message used of 3 and 2: another message fits, then the budget is spent.
    const second = { ...BODY, messages: [{ ...BODY.messages[0]!, external_id: 'otp-2' }] };
    expect((await send(app, null, second)).status).toBe(200);
    const third = await send(app, null, { ...BODY, messages: [{ ...BODY.messages[0]!, external_id: 'otp-3' }] });
    expect(third.status).toBe(429);
    expect(third.body.details).toMatch(/Message budget/);
  });

  it('replays without checking the backlog bound the first request filled', async () => {
    const delivery = new GatedDelivery('all');
    const { app } = start({ delivery, worker: { concurrency: 1 }, backlog: { perKey: 1, total: 10, refreshMs: 1 } });
    try {
      const first = await send(app, 'queued-1');
      expect(first.status).toBe(200);
      expect((await send(app, null, { ...BODY, messages: [{ ...BODY.messages[0]!, external_id: 'otp-2' }] })).body.code).toBe('QUEUE_FULL');
      const replay = await send(app, 'queued-1');
      expect(replay.status).toBe(200);
      expect(replay.text).toBe(first.text);
    } finally {
      delivery.open();
    }
  });

  it('keeps nothing for a refused request, so a corrected retry with the same key goes through', async () => {
    const { app } = start();
    const refused = await send(app, 'fix-me', { ...BODY, profile_code: '00000' });
    expect(refused.body.code).toBe('INVALID_PROFILE');
    const invalid = await send(app, 'fix-me', { ...BODY, messages: [{ recipient: '+254712345678', message: 'x' }] });
    expect(invalid.body.code).toBe('VALIDATION_FAILED');
    const corrected = await send(app, 'fix-me');
    expect(corrected.status).toBe(200);
    expect(corrected.headers['idempotent-replayed']).toBeUndefined();
  });

  it('keeps nothing when storing fails, so the retry is stored', async () => {
    const storage = new MemoryStorage();
    const insert = storage.insertMessages.bind(storage);
    let failures = 1;
    storage.insertMessages = async (...args) => {
      if (failures-- > 0) throw new Error('disk full');
      return insert(...args);
    };
    const { app } = start({ storage });
    expect((await send(app, 'retry-me')).status).toBe(500);
    const retry = await send(app, 'retry-me');
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await stored(app)).toHaveLength(1);
  });

  it("refuses the header (400) when the storage cannot keep keys, and sends without it as before", async () => {
    const storage = new MemoryStorage() as Storage;
    storage.findIdempotency = undefined;
    storage.purgeIdempotency = undefined;
    const { app } = start({ storage });
    const res = await send(app, 'k-1');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ details: "Idempotency-Key is not supported by this gateway's storage", code: 'INVALID_IDEMPOTENCY_KEY' });
    expect((await send(app, null)).status).toBe(200);
  });
});

describe('the OpenAPI document', () => {
  it('declares the header, Idempotent-Replayed and the 400, 409 and 422 answers on both send paths', async () => {
    const { app } = start();
    const doc = (await request(app).get('/api/outbox/openapi.json').expect(200)).body;
    for (const path of ['/api/outbox/create', '/api/outbox/premium']) {
      const post = doc.paths[path].post;
      const parameter = post.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key');
      expect(parameter, path).toMatchObject({ in: 'header', required: false, schema: { minLength: 1, maxLength: 255 } });
      expect(post.responses['200'].headers['Idempotent-Replayed'], path).toBeDefined();
      expect(Object.keys(post.responses), path).toEqual(expect.arrayContaining(['400', '409', '422']));
    }
    const examples = (name: string) => Object.keys(doc.components.responses[name].content['application/json'].examples);
    expect(examples('BadRequest')).toContain('INVALID_IDEMPOTENCY_KEY');
    expect(examples('IdempotencyInFlight')).toEqual(['IDEMPOTENCY_IN_FLIGHT']);
    expect(doc.components.responses.IdempotencyInFlight.headers['Retry-After'].required).toBe(true);
    expect(examples('Unprocessable')).toContain('IDEMPOTENCY_CONFLICT');
  });
});

describe('retentionSweep', () => {
  it('with retention: false keeps every message and still sweeps expired keys', async () => {
    const storage = new MemoryStorage();
    const message = buildNewMessage({ createdAt: 0 });
    await storage.insertMessages([message], undefined, {
      principalId: message.principalId, key: 'k', bodyHash: 'h', status: 200, body: '[]', createdAt: 0, expiresAt: 10,
    });
    await storage.finish(message.ref, outcome('delivered', 'delivered_to_terminal'), 1);
    const sweep = retentionSweep(storage, false, () => 1e12, () => undefined)!;
    await sweep.runNow();
    expect(await storage.purgeIdempotency(1e12, 10)).toBe(0);
    expect(await storage.getMessage(message.principalId, message.ref)).not.toBeNull();
    expect(retentionSweep({ ...storage, purgeIdempotency: undefined, storeInboundPart: undefined } as unknown as Storage, false, Date.now, () => undefined)).toBeNull();
  });
});

describe('the idempotency option', () => {
  it('refuses a bad ttlMs and an unknown name at construction', () => {
    const make = (idempotency: unknown) => () => createSmsRouter({ verifyKey: testKeys, idempotency } as SmsRouterOptions);
    expect(make({ ttlMs: 0 })).toThrow(OptionError);
    expect(make({ ttlMs: 0 })).toThrow(/idempotency\.ttlMs must be an integer >= 1/);
    expect(make({ ttl: 5 })).toThrow(/ttlMs/);
    expect(make('1d')).toThrow(/idempotency must be an object/);
    const sms = createSmsRouter({ verifyKey: testKeys, idempotency: { ttlMs: 5_000 } });
    express().use(sms);
    return sms.close();
  });
});

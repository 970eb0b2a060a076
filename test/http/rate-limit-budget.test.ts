/** The per-key message budget: refusals that store nothing, what it gives back, a failing store; and its in-process store. */
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { MemoryStorage, type NewMessage } from '../../src/index.js';
import { MemoryBudgetStore } from '../../src/http/rate-limit/budget-store.js';
import { KEY, OTHER_KEY, type TestGateway } from '../helpers/gateway.js';
import { closeGatewayAfterEach, expect429, messages, policy, send, start, statusQuery } from './limited-gateway.js';

closeGatewayAfterEach();

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

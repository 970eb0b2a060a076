/**
 * The backlog bounds, through the public API: a send that would take a key's queued
 * messages past its bound is refused whole with 429, one that would take everyone's past
 * the global bound with 503; each with `Retry-After`, storing nothing and charging nothing
 * from the key's message budget. The carrier holds every submit, so what is accepted stays
 * queued until the test opens it.
 */
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createSmsRouter, MemoryStorage, staticKeys, type SmsRouter } from '../../src/index.js';
import { GatedDelivery } from '../helpers/gated-delivery.js';
import { eventually } from '../helpers/poll.js';
import { recordAnswers } from '../helpers/answers.js';

const keys = staticKeys([
  { key: 'a', id: 'a', profiles: ['12345'] },
  { key: 'b', id: 'b', profiles: ['12345'] },
  { key: 'vip', id: 'vip', profiles: ['12345'], maxQueued: 6 },
]);

let sms: SmsRouter | undefined;
let carrier: GatedDelivery | undefined;
afterEach(async () => {
  // close() waits for the submits the worker holds: let them through.
  carrier?.open();
  await sms?.close();
  sms = undefined;
});

function gateway(messagesPerWindow = 100) {
  const storage = new MemoryStorage();
  const delivery = new GatedDelivery('all');
  carrier = delivery;
  sms = createSmsRouter({
    verifyKey: keys,
    storage,
    delivery,
    // One slot: the worker holds at most 4 messages, the rest stay queued and unclaimed.
    worker: { concurrency: 1 },
    backlog: { perKey: 3, total: 8, refreshMs: 1 },
    rateLimit: { messages: { limit: messagesPerWindow, windowMs: 60_000 } },
  });
  // Every answer is checked against the OpenAPI document (test/helpers/answers.ts).
  const app = express().use(recordAnswers({ basePath: '/api/outbox' }), sms);
  const send = (key: string, count: number) =>
    request(app)
      .post('/api/outbox/create')
      .set('X-API-Key', key)
      .send({ profile_code: '12345', messages: Array.from({ length: count }, (_, i) => ({ recipient: '254712345678', message: `m${i}` })) });
  return { storage, delivery, send };
}

describe('the backlog bounds', () => {
  it("refuse with 429 a send that would pass the key's bound, whole, storing nothing", async () => {
    const { storage, send } = gateway();
    await send('a', 3).expect(200);
    const refused = await send('a', 2);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ details: 'Too many queued messages for this key: 3 queued, at most 3; retry once some are sent', code: 'QUEUE_FULL' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await storage.countQueued()).bulk).toBe(3);
    // Another key is not held back by it.
    await send('b', 2).expect(200);
  });

  it("let a principal's maxQueued replace the per-key bound", async () => {
    const { send } = gateway();
    await send('vip', 6).expect(200);
    const refused = await send('vip', 1);
    expect([refused.status, refused.body.code]).toEqual([429, 'QUEUE_FULL']);
  });

  it('refuse with 503 a send that would pass the global bound', async () => {
    const { storage, send } = gateway();
    await send('vip', 6).expect(200);
    await send('a', 2).expect(200);
    const refused = await send('b', 1);
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ details: 'The gateway has too many queued messages; retry once some are sent', code: 'BACKLOG_FULL' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const count = await storage.countQueued();
    expect(count.bulk + count.transactional).toBe(8);
  });

  it("charge nothing from the key's message budget for a refused send, and admit again once the queue drains", async () => {
    const { delivery, storage, send } = gateway(5);
    await send('a', 3).expect(200);
    expect((await send('a', 2)).status).toBe(429);
    delivery.open();
    await eventually(async () => (await storage.countQueued()).bulk === 0, { what: 'the queue to drain' });
    // 3 sent + 2 now = the budget of 5: the refused 2 were not charged.
    await send('a', 2).expect(200);
    const overBudget = await send('a', 1);
    expect([overBudget.status, overBudget.body.code]).toEqual([429, 'RATE_LIMITED']);
    expect(overBudget.body.details).not.toContain('queued');
  });
});

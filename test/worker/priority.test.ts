/**
 * Priority through the router: a transactional message accepted while the worker holds a
 * full load of bulk ones goes to the carrier next, ahead of every bulk message held or
 * queued before it (only the part already at the carrier goes first).
 */
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createSmsRouter, MemoryStorage, staticKeys, staticProfiles, type SmsRouter } from '../../src/index.js';
import { GatedDelivery } from '../helpers/gated-delivery.js';
import { eventually } from '../helpers/poll.js';
import { recordAnswers } from '../helpers/answers.js';

let sms: SmsRouter | undefined;
let carrier: GatedDelivery | undefined;
afterEach(async () => {
  carrier?.open();
  await sms?.close();
  sms = undefined;
});

describe('a transactional message', () => {
  it('is submitted before the bulk messages held and queued ahead of it', async () => {
    carrier = new GatedDelivery('all');
    sms = createSmsRouter({
      verifyKey: staticKeys([
        { key: 'bulk', id: 'campaigns' },
        { key: 'otp', id: 'bank' },
      ]),
      resolveProfile: staticProfiles([
        { code: 'NEWS', owners: ['campaigns'] },
        { code: 'OTP', owners: ['bank'], priority: 'transactional' },
      ]),
      storage: new MemoryStorage(),
      delivery: carrier,
      // One slot: the worker holds 4 messages, the rest of the campaign stays queued.
      worker: { concurrency: 1 },
      rateLimit: false,
    });
    const app = express().use(recordAnswers({ basePath: '/api/outbox' }), sms);
    const send = (key: string, profile: string, count: number) =>
      request(app)
        .post('/api/outbox/create')
        .set('X-API-Key', key)
        .send({ profile_code: profile, messages: Array.from({ length: count }, (_, i) => ({ recipient: '254712345678', message: `m${i}` })) })
        .expect(200);
    await send('bulk', 'NEWS', 10);
    await eventually(() => carrier!.submitted.length === 1, { what: 'the first bulk part at the carrier' });
    const otp = (await send('otp', 'OTP', 1)).body[0].message_ref as string;

    carrier.open();
    await eventually(() => carrier!.submitted.length === 11, { what: 'every message submitted' });
    expect(carrier.submitted.indexOf(otp)).toBe(1);
  });
});

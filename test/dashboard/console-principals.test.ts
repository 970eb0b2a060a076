/**
 * The console's Principals view with the host's own `verifyKey` (not a `staticKeys` table,
 * which the router can list): the principals whose messages this process accepted, with
 * their balance, and the view saying why it shows no more.
 */
import { describe, expect, it } from 'vitest';
import express from 'express';
import request from 'supertest';
import { createSmsRouter, MemoryStorage, SimulatorDelivery } from '../../src/index.js';
import { createSmsDashboard } from '../../src/dashboard.js';

describe('the console\u2019s principals with a host verifier', () => {
  it('lists the principals seen accepted, with their balance, and says the verifier cannot be listed', async () => {
    const sms = createSmsRouter({
      verifyKey: (key) => (key === 'k-initech' ? { id: 'initech', profiles: ['12345'] } : null),
      storage: new MemoryStorage(),
      delivery: new SimulatorDelivery({ outcomes: { delivered: 1 } }),
      credit: { ledger: 'storage' },
    });
    try {
      const app = express().use(sms).use('/ops', createSmsDashboard(sms, { allowUnauthenticated: true }));
      await sms.ready();
      const empty = await request(app).get('/ops/principals');
      expect(empty.text).toContain('id="principal-table-empty"');
      await sms.credit!.topUp('initech', 7);
      const sent = await request(app)
        .post('/api/outbox/create')
        .set('X-API-Key', 'k-initech')
        .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'hi' }] });
      expect(sent.status).toBe(200);
      const page = await request(app).get('/ops/principals');
      expect(page.status).toBe(200);
      expect(page.text).toMatch(/<td class="mono">initech<\/td><td id="balance-initech">6<\/td>/);
      expect(page.text).toContain('cannot list its principals');
    } finally {
      await sms.close();
    }
  });
});

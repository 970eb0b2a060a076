/**
 * A closed router stays closed: a request (or `ready()`) after `close()` starts nothing again,
 * even when the router never started (its storage was down at boot), so no carrier
 * connection, worker or sweep outlives `close()`.
 */
import request from 'supertest';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { createSmsRouter, MemoryStorage, SimulatorDelivery, type Storage } from '../../src/index.js';
import { KEY, testKeys } from '../helpers/gateway.js';

/** A memory storage whose first `ready()` fails, as a database down at boot. */
function downAtBoot(): Storage {
  const storage = new MemoryStorage();
  let calls = 0;
  storage.ready = async () => {
    calls++;
    if (calls === 1) throw new Error('database down at boot');
  };
  return storage;
}

describe('after close()', () => {
  it('a request to a router whose start had failed opens no carrier connection', async () => {
    const delivery = new SimulatorDelivery({ seed: 1, latencyMs: [1, 2] });
    let starts = 0;
    const start = delivery.start.bind(delivery);
    delivery.start = (handlers) => {
      starts++;
      return start(handlers);
    };
    const sms = createSmsRouter({ verifyKey: testKeys, storage: downAtBoot(), delivery, rateLimit: false });
    const errors: unknown[] = [];
    sms.on('error', ({ error }) => errors.push(error));
    await expect(sms.ready()).rejects.toThrow('database down at boot');
    await sms.close();

    const app = express().use(sms);
    const answer = await request(app).get('/api/outbox/delivery-status/any').set('X-API-Key', KEY);
    expect(answer.status).toBe(500);
    await expect(sms.ready()).rejects.toThrow(/closed/);
    expect(starts).toBe(0);
    await delivery.close();
  });
});

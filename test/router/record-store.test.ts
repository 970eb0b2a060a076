/**
 * A host's record store as the router's `storage`: the router wraps it in the ledger, and a
 * message goes its whole way (accepted, submitted, its receipts folded, its status answered)
 * with every decision made by the library.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createSmsRouter, outcome, staticKeys, type RecordStore } from '../../src/index.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';
import { NaiveRecordStore } from '../helpers/naive-record-store.js';
import { eventually } from '../helpers/poll.js';
import { ScriptedDelivery } from '../helpers/scripted-delivery.js';

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.sms.close();
  gateway = undefined;
});

describe('a record store as the storage option', () => {
  it('carries a long message from its request to its delivered status, the ledger deciding', async () => {
    const carrier = new ScriptedDelivery();
    const store = new NaiveRecordStore();
    gateway = createGateway({ delivery: carrier, storage: store });
    const res = await request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'z'.repeat(200), external_id: 'order-7' }] });
    expect(res.status).toBe(200);
    const ref = res.body[0].message_ref as string;
    await eventually(() => carrier.submitted.length === 2, { what: 'both parts submitted' });
    await eventually(async () => (await store.getMessage(ref))?.record.state === 'submitted', { what: 'the message submitted' });
    for (const part of carrier.submitted) await carrier.receipt({ carrierId: part.carrierId, outcome: outcome('delivered', 'delivered_to_terminal') });
    const status = await request(gateway.app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', KEY);
    expect(status.body).toMatchObject({ status: 'delivered', status_reason: 'delivered_to_terminal' });
    const byExternalId = await request(gateway.app).get('/api/outbox/delivery-status').query({ external_id: 'order-7' }).set('X-API-Key', KEY);
    expect(byExternalId.status).toBe(200);
    expect(JSON.stringify(byExternalId.body)).toContain(ref);
  });

  it('refuses a record store without one of its methods, naming it and the contract', () => {
    const store = new NaiveRecordStore();
    const broken = Object.assign(Object.create(Object.getPrototypeOf(store) as object) as RecordStore, store, { queueEnds: undefined });
    expect(() => createSmsRouter({ verifyKey: staticKeys([]), storage: broken })).toThrow(/is not a RecordStore: an instance of NaiveRecordStore without the method queueEnds\(\)/);
  });
});

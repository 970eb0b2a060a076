/**
 * A principal's `reportFormat`: a real receiver gets the published envelope for one customer
 * and the flat report (`external_id`, `status`, `reason` at the top level) for another, each
 * signed over the body as sent and verifiable with a Standard Webhooks library.
 */
import express from 'express';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { createSmsRouter, SimulatorDelivery, staticKeys, type KeyVerifier, type SmsRouter } from '../../src/index.js';
import { eventually } from '../helpers/poll.js';
import { startReceiver, type Receiver, type Received } from '../inbound/receiver.js';

const secretOf = (text: string) => `whsec_${Buffer.from(text).toString('base64')}`;
const ENVELOPE_SECRET = secretOf('the envelope customer secret....');
const FLAT_SECRET = secretOf('the flat customer secret........');

const open: { sms: SmsRouter; receiver: Receiver }[] = [];
afterEach(async () => {
  for (const { sms, receiver } of open.splice(0)) {
    await sms.close();
    await receiver.close();
  }
});

/** A gateway with `verifyKey` whose reports go to a fresh local receiver. */
async function gateway(verifyKey: KeyVerifier) {
  const receiver = await startReceiver([200]);
  const sms = createSmsRouter({
    verifyKey,
    delivery: new SimulatorDelivery({ seed: 7, latencyMs: [1, 5] }),
    worker: { pollIntervalMs: 20 },
    dlr: { allowPrivateAddresses: true, pollIntervalMs: 20 },
  });
  open.push({ sms, receiver });
  await sms.ready();
  return { app: express().use(sms), receiver };
}

/** Sends one message with `key` and a report URL; returns its `message_ref`. */
async function send(app: express.Express, key: string, externalId: string, url: string): Promise<string> {
  const res = await request(app)
    .post('/api/outbox/create')
    .set('X-API-Key', key)
    .send({ profile_code: '12345', dlr_callback_url: url, messages: [{ recipient: '254712345678', message: 'Hi', external_id: externalId }] });
  expect(res.status).toBe(200);
  return (res.body as { message_ref: string }[])[0]!.message_ref;
}

/** The report the receiver got whose body names `ref`, verified with `secret` as a customer would. */
function verified(received: Received[], ref: string, secret: string): Record<string, unknown> {
  const report = received.find((r) => r.body.includes(ref));
  expect(report, `a report on ${ref}`).toBeDefined();
  return new Webhook(secret).verify(report!.body, report!.headers as Record<string, string>) as Record<string, unknown>;
}

describe("a principal's reportFormat", () => {
  it('sends the envelope by default and the flat report to a flat principal, both signed as sent', async () => {
    const { app, receiver } = await gateway(
      staticKeys([
        { key: 'envelope-key', id: 'envelope-co', profiles: ['12345'], callbackSecret: ENVELOPE_SECRET },
        { key: 'flat-key', id: 'flat-co', profiles: ['12345'], callbackSecret: FLAT_SECRET, reportFormat: 'flat' },
      ]),
    );
    const envelopeRef = await send(app, 'envelope-key', 'env-1', receiver.url);
    const flatRef = await send(app, 'flat-key', 'flat-1', receiver.url);
    await eventually(() => receiver.received.length >= 2, { what: 'both reports' });

    const envelope = verified(receiver.received, envelopeRef, ENVELOPE_SECRET);
    expect(envelope).toMatchObject({ event_type: 'sms_delivery_status', data: { external_id: 'env-1', message_ref: envelopeRef } });
    expect(envelope).not.toHaveProperty('external_id');

    // What a receiver written for the original service reads: the fields at the top level.
    const flat = verified(receiver.received, flatRef, FLAT_SECRET);
    const status = await request(app).get(`/api/outbox/delivery-status/${flatRef}`).set('X-API-Key', 'flat-key');
    expect(flat).toEqual({
      uid: expect.any(String),
      actor_type: 'system',
      event_type: 'sms_delivery_status',
      created_at: expect.stringMatching(/^\d{10}$/),
      external_id: 'flat-1',
      message_ref: flatRef,
      recipient: '254712345678',
      status: status.body.status,
      status_reason: status.body.status_reason,
      status_description: status.body.status_description,
      reason: status.body.status_description,
      sms_count: 1,
    });
    expect(flat.reason).toEqual(expect.any(String));
    // The body as sent is what was signed: the other customer's secret does not verify it.
    expect(() => verified(receiver.received, flatRef, ENVELOPE_SECRET)).toThrow();
  });

  it("is noted from a host's own verifier", async () => {
    const principals = {
      'flat-key': { id: 'flat-co', profiles: ['12345'], reportFormat: 'flat' as const },
      'envelope-key': { id: 'envelope-co', profiles: ['12345'] },
    };
    const { app, receiver } = await gateway(async (key) => principals[key as keyof typeof principals] ?? null);
    const flatRef = await send(app, 'flat-key', 'flat-2', receiver.url);
    const envelopeRef = await send(app, 'envelope-key', 'env-2', receiver.url);
    await eventually(() => receiver.received.length >= 2, { what: 'both reports' });
    const bodyOf = (ref: string) => JSON.parse(receiver.received.find((r) => r.body.includes(ref))!.body) as Record<string, unknown>;
    expect(bodyOf(flatRef)).toMatchObject({ external_id: 'flat-2', message_ref: flatRef, status: expect.any(String) });
    expect(bodyOf(flatRef)).not.toHaveProperty('data');
    expect(bodyOf(envelopeRef)).toMatchObject({ data: { external_id: 'env-2' } });
  });
});

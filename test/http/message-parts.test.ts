/**
 * Each part of a long message, through the public API over HTTP: the status answer's `parts`
 * (carrier id, state, error code, times) after submission and after receipts, and a profile's
 * `reportPer: 'part'`: one signed report per part, with its index and carrier id, at a real
 * receiver, retried like any report.
 */
import express from 'express';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { createSmsRouter, outcome, SimulatorDelivery, staticKeys, staticProfiles, type DeliveryAdapter, type SmsRouter } from '../../src/index.js';
import { eventually } from '../helpers/poll.js';
import { ScriptedDelivery } from '../helpers/scripted-delivery.js';
import { startReceiver, type Receiver } from '../inbound/receiver.js';

const SECRET = `whsec_${Buffer.from('the per-part customer secret....').toString('base64')}`;
const KEY = 'parts-key';
/** 400 GSM-7 characters: three parts of 153. */
const LONG_TEXT = 'Long message. '.repeat(29).slice(0, 400);

const open: { sms: SmsRouter; receiver?: Receiver }[] = [];
afterEach(async () => {
  for (const { sms, receiver } of open.splice(0)) {
    await sms.close();
    await receiver?.close();
  }
});

/** A gateway over `delivery` whose profile `12345` reports per message and `77777` per part. */
async function gateway(delivery: DeliveryAdapter, receiver?: Receiver) {
  const sms = createSmsRouter({
    verifyKey: staticKeys([{ key: KEY, id: 'acme', profiles: ['12345', '77777'], callbackSecret: SECRET }]),
    resolveProfile: staticProfiles([
      { code: '12345', owners: ['acme'] },
      { code: '77777', owners: ['acme'], reportPer: 'part' },
    ]),
    delivery,
    worker: { pollIntervalMs: 20 },
    // The second attempt soon: a refused report is retried within the test.
    dlr: { allowPrivateAddresses: true, pollIntervalMs: 20, schedule: [0, 50, 50] },
  });
  open.push({ sms, ...(receiver === undefined ? {} : { receiver }) });
  await sms.ready();
  return { app: express().use(sms), sms };
}

async function send(app: express.Express, profile: string, url?: string): Promise<string> {
  const res = await request(app)
    .post('/api/outbox/create')
    .set('X-API-Key', KEY)
    .send({ profile_code: profile, ...(url === undefined ? {} : { dlr_callback_url: url }), messages: [{ recipient: '254712345678', message: LONG_TEXT, external_id: 'long-1' }] });
  expect(res.status).toBe(200);
  expect(res.body[0].sms_count).toBe(3);
  return (res.body as { message_ref: string }[])[0]!.message_ref;
}

interface PartAnswer {
  index: number;
  carrier_id: string | null;
  status: string;
  error_code: string | null;
  submitted_at: string | null;
  final_at: string | null;
}

async function partsOf(app: express.Express, ref: string): Promise<{ status: string; parts: PartAnswer[] }> {
  const res = await request(app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', KEY);
  expect(res.status).toBe(200);
  return res.body as { status: string; parts: PartAnswer[] };
}

/** The state of the message's report slot, as the status answer shows it. */
async function callbackStateOf(app: express.Express, ref: string): Promise<string> {
  const res = await request(app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', KEY);
  return (res.body as { callback: { state: string } }).callback.state;
}

describe('the parts of a message in the status answer', () => {
  it('shows each part submitted with its carrier id and time, then each receipt\u2019s state, error code and time', async () => {
    const delivery = new ScriptedDelivery();
    const { app } = await gateway(delivery);
    const before = Date.now();
    const ref = await send(app, '12345');
    await eventually(() => delivery.submitted.length === 3, { what: 'three parts submitted' });
    const submitted = await eventually(() => partsOf(app, ref), { until: (answer) => answer.status === 'submitted', what: 'the message submitted' });
    expect(submitted.parts.map((part) => [part.index, part.carrier_id, part.status, part.error_code, part.final_at])).toEqual(
      // Stored as normalised (normalizeCarrierId): hex in lower case.
      delivery.submitted.map((part) => [part.index, part.carrierId.toLowerCase(), 'submitted', null, null]),
    );
    for (const part of submitted.parts) expect(Date.parse(part.submitted_at!)).toBeGreaterThanOrEqual(before - 1);

    await delivery.receipt({ carrierId: delivery.submitted[2]!.carrierId, outcome: outcome('delivered', 'delivered_to_terminal') });
    await delivery.receipt({ carrierId: delivery.submitted[0]!.carrierId, outcome: outcome('undelivered', 'absent_subscriber') });
    const mid = await partsOf(app, ref);
    expect(mid.status).toBe('submitted');
    expect(mid.parts.map((part) => [part.status, part.error_code])).toEqual([['undelivered', 'absent_subscriber'], ['submitted', null], ['delivered', null]]);
    expect(mid.parts[1]!.final_at).toBeNull();

    await delivery.receipt({ carrierId: delivery.submitted[1]!.carrierId, outcome: outcome('delivered', 'delivered_to_terminal') });
    const ended = await partsOf(app, ref);
    expect(ended.status).toBe('undelivered');
    expect(ended.parts.map((part) => [part.status, part.error_code])).toEqual([['undelivered', 'absent_subscriber'], ['delivered', null], ['delivered', null]]);
    for (const part of ended.parts) expect(Date.parse(part.final_at!)).toBeGreaterThanOrEqual(Date.parse(part.submitted_at!));
  });

  it('gives a part that never went the message\u2019s end: a cancelled message\u2019s parts are cancelled, with no carrier id', async () => {
    const { app } = await gateway(new ScriptedDelivery());
    const res = await request(app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', send_at: Math.floor(Date.now() / 1000) + 3600, messages: [{ recipient: '254712345678', message: LONG_TEXT }] });
    const ref = (res.body as { message_ref: string }[])[0]!.message_ref;
    const scheduled = await partsOf(app, ref);
    expect(scheduled.parts.map((part) => part.status)).toEqual(['scheduled', 'scheduled', 'scheduled']);
    await request(app).delete(`/api/outbox/messages/${ref}`).set('X-API-Key', KEY).expect(200);
    const cancelled = await partsOf(app, ref);
    expect(cancelled.parts.map((part) => [part.carrier_id, part.status, part.error_code, part.submitted_at])).toEqual(
      [0, 1, 2].map(() => [null, 'cancelled', 'cancelled', null]),
    );
    expect(cancelled.parts[0]!.final_at).not.toBeNull();
  });
});

describe("a profile's reportPer: 'part'", () => {
  it('sends one signed report per part, each with its index and carrier id, retried like any report', async () => {
    // The first report is refused once: its retry must still come, and the others after it.
    const receiver = await startReceiver([503, 200]);
    const { app } = await gateway(new SimulatorDelivery({ seed: 3, latencyMs: [1, 5], outcomes: { delivered: 1 } }), receiver);
    const ref = await send(app, '77777', receiver.url);
    await eventually(() => receiver.received.filter((r) => r.status === 200).length >= 3, { what: 'three reports accepted', timeoutMs: 10_000 });
    const status = await partsOf(app, ref);
    expect(status.status).toBe('delivered');

    const verify = new Webhook(SECRET);
    const accepted = receiver.received.filter((r) => r.status === 200).map((r) => verify.verify(r.body, r.headers as Record<string, string>) as { uid: string; data: Record<string, unknown> });
    expect(accepted).toHaveLength(3);
    for (const report of accepted) expect(report.data).toMatchObject({ message_ref: ref, external_id: 'long-1', status: 'delivered', status_reason: 'delivered_to_terminal', sms_count: 3 });
    const reported = accepted.map((report) => report.data.part as { index: number; carrier_id: string }).sort((a, b) => a.index - b.index);
    expect(reported).toEqual(status.parts.map((part) => ({ index: part.index, carrier_id: part.carrier_id })));
    expect(new Set(accepted.map((report) => report.uid)).size).toBe(3);
    // The refused attempt was the first part report's, sent again under the same uid.
    const refused = receiver.received.find((r) => r.status === 503)!;
    expect(accepted.map((report) => report.uid)).toContain(JSON.parse(refused.body).uid);
    // No fourth report, on the message as a whole: once its last report is finished, none is pending or waiting.
    await eventually(() => callbackStateOf(app, ref), { until: (state) => state === 'delivered', what: 'the last report finished' });
    expect(receiver.received.filter((r) => r.status === 200)).toHaveLength(3);
  });

  it('keeps one report per message by default', async () => {
    const receiver = await startReceiver([200]);
    const { app } = await gateway(new SimulatorDelivery({ seed: 3, latencyMs: [1, 5], outcomes: { delivered: 1 } }), receiver);
    const ref = await send(app, '12345', receiver.url);
    await eventually(() => receiver.received.length >= 1, { what: 'the report' });
    await eventually(() => callbackStateOf(app, ref), { until: (state) => state === 'delivered', what: 'the report finished' });
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(receiver.received[0]!.body).data).not.toHaveProperty('part');
  });

  it('refuses a reportPer other than message or part at construction', () => {
    expect(() => staticProfiles([{ code: '1', owners: ['a'], reportPer: 'each' as 'part' }])).toThrow(/reportPer must be 'message' or 'part'/);
  });
});

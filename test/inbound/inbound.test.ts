/**
 * The premium MO flow through the router, with the simulated carrier: inbound messages
 * forwarded to the owner's inbound URL as signed, retried webhooks; STOP and START opting a
 * subscriber out of a short code and back in; sends to an opted-out number ending
 * `rejected` (`opted_out`) without reaching the carrier; the confirmation replies; the
 * opt-out list's API; the options checked at construction.
 */
import * as client from 'prom-client';
import request from 'supertest';
import express from 'express';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createSmsRouter,
  MemoryStorage,
  SimulatorDelivery,
  staticKeys,
  staticProfiles,
  type SmsRouter,
  type SmsRouterOptions,
  type SubscriberOptEvent,
} from '../../src/index.js';
import { eventually } from '../helpers/poll.js';
import { GatedDelivery } from '../helpers/gated-delivery.js';
import { startReceiver, type Receiver } from './receiver.js';

const KEY = 'inbound-test-key';
const SECRET = `whsec_${Buffer.from('an inbound secret of 32 bytes!!!').toString('base64')}`;
const SHORT_CODE = '22021501';
const SUBSCRIBER = '254711000001';

const open: { sms: SmsRouter; receiver?: Receiver }[] = [];
afterEach(async () => {
  for (const { sms, receiver } of open.splice(0)) {
    await sms.close();
    await receiver?.close();
  }
});

/** A gateway whose principal owns the short code and forwards its MO messages to `receiver`. */
async function gateway(statuses: readonly number[] = [204], options: Partial<SmsRouterOptions> = {}) {
  const receiver = await startReceiver(statuses);
  const delivery = new SimulatorDelivery({ seed: 3, latencyMs: [1, 5] });
  const storage = new MemoryStorage();
  const sms = createSmsRouter({
    verifyKey: staticKeys([{ key: KEY, id: 'acme', profiles: [SHORT_CODE, '12345'], inboundUrl: receiver.url, callbackSecret: SECRET }]),
    storage,
    delivery,
    worker: { pollIntervalMs: 20 },
    dlr: { allowPrivateAddresses: true, schedule: [0, 30, 30], pollIntervalMs: 20 },
    ...options,
  });
  open.push({ sms, receiver });
  await sms.ready();
  const app = express().use(sms);
  return { sms, app, delivery, storage, receiver };
}

async function premium(app: express.Express, to: string, message = 'Premium news'): Promise<string> {
  const res = await request(app).post('/api/outbox/premium').set('X-API-Key', KEY)
    .send({ profile_code: SHORT_CODE, messages: [{ mobile_number: to, message, external_id: 'p' }] });
  expect(res.status).toBe(200);
  return (res.body as { message_ref: string }[])[0]!.message_ref;
}

async function statusOf(app: express.Express, ref: string): Promise<{ status: string; status_reason: string | null }> {
  const res = await request(app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', KEY);
  return res.body as { status: string; status_reason: string | null };
}

describe('inbound messages', () => {
  it('are forwarded to the owner\'s inbound URL, signed, and retried until a 2xx', async () => {
    const { sms, delivery, receiver } = await gateway([500, 204]);
    const events: string[] = [];
    // Each event's record shows the webhook as the attempt it announces left it.
    const webhooks: unknown[] = [];
    sms.on('inbound.retrying', (e) => void (events.push(`retrying ${e.statusCode}`), webhooks.push(e.inbound.callback)));
    sms.on('inbound.sent', (e) => void (events.push(`sent ${e.statusCode} attempt ${e.attempt}`), webhooks.push(e.inbound.callback)));
    await delivery.simulateInbound({ from: `+${SUBSCRIBER}`, to: SHORT_CODE, text: 'Hello there' });
    await eventually(() => events.includes('sent 204 attempt 2'), { what: 'the webhook delivered on its second attempt' });
    expect(events).toEqual(['retrying 500', 'sent 204 attempt 2']);
    expect(webhooks).toEqual([
      { state: 'pending', attempts: 1, lastStatusCode: 500, lastError: 'HTTP 500', nextAttemptAt: expect.any(Number) },
      { state: 'delivered', attempts: 2, lastStatusCode: 204, lastError: null, nextAttemptAt: null },
    ]);
    const [first, second] = receiver.received;
    // The same webhook both times, verified as a customer would verify it.
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    const payload = new Webhook(SECRET).verify(second!.body, second!.headers as Record<string, string>) as Record<string, unknown>;
    expect(payload).toMatchObject({
      uid: second!.headers['webhook-id'],
      actor_type: 'system',
      event_type: 'sms_inbound',
      data: { from: SUBSCRIBER, to: SHORT_CODE, message: 'Hello there', profile_code: SHORT_CODE },
    });
    const data = payload.data as { message_ref: string; received_at: string };
    expect(data.received_at).toMatch(/^\d{10}$/);
  });

  it('to a short code no one owns is stored, not forwarded', async () => {
    const { delivery, storage, receiver } = await gateway();
    await delivery.simulateInbound({ from: SUBSCRIBER, to: '99999', text: 'Anyone?' });
    const [record] = await storage.listInbound({ limit: 5 });
    expect(record).toMatchObject({ from: SUBSCRIBER, to: '99999', text: 'Anyone?', principalId: null, callbackUrl: null, callback: null });
    expect(receiver.received).toEqual([]);
  });
});

describe('opt-out', () => {
  it('STOP opts the subscriber out: a premium send to them ends rejected/opted_out and never reaches the carrier; START restores', async () => {
    const { sms, app, delivery, receiver } = await gateway();
    const opted: SubscriberOptEvent[] = [];
    sms.on('subscriber.opted_out', (e) => opted.push(e));
    sms.on('subscriber.opted_in', (e) => opted.push(e));
    await delivery.simulateInbound({ from: SUBSCRIBER, to: SHORT_CODE, text: '  stop ' });
    expect(opted).toMatchObject([{ shortCode: SHORT_CODE, number: SUBSCRIBER, source: 'keyword' }]);
    expect(await sms.optOuts.has(SHORT_CODE, SUBSCRIBER)).toBe(true);
    // The keyword is forwarded like any message: the customer sees it.
    await eventually(() => receiver.received.length === 1, { what: 'the STOP forwarded' });

    const blocked = await premium(app, SUBSCRIBER);
    const other = await premium(app, '254711000002');
    await eventually(async () => (await statusOf(app, blocked)).status === 'rejected', { what: 'the blocked message ended' });
    expect(await statusOf(app, blocked)).toMatchObject({ status: 'rejected', status_reason: 'opted_out' });
    await eventually(async () => (await statusOf(app, other)).status === 'delivered', { what: 'the other message delivered' });
    expect(delivery.submitted.map((part) => part.recipient)).toEqual(['254711000002']);

    await delivery.simulateInbound({ from: SUBSCRIBER, to: SHORT_CODE, text: 'START' });
    expect(opted.map((e) => e.shortCode === SHORT_CODE && e.number)).toEqual([SUBSCRIBER, SUBSCRIBER]);
    const again = await premium(app, SUBSCRIBER);
    await eventually(async () => (await statusOf(app, again)).status === 'delivered', { what: 'a message after START delivered' });
  });

  it('an opt-out recorded after acceptance, while the message waits for the carrier, still stops its submit', async () => {
    const gated = new GatedDelivery('first');
    const { sms, app } = await gateway([204], { delivery: gated, worker: { pollIntervalMs: 20, concurrency: 1 } });
    // The first message holds the only slot at the carrier; the second waits behind it.
    const res = await request(app).post('/api/outbox/premium').set('X-API-Key', KEY)
      .send({ profile_code: SHORT_CODE, to: ['254711000002', SUBSCRIBER], message: 'Two of them' });
    const [first, second] = (res.body as { message_ref: string }[]).map((item) => item.message_ref);
    await eventually(() => gated.submitted.length === 1, { what: 'the first message at the carrier' });
    await sms.optOuts.add(SHORT_CODE, SUBSCRIBER);
    gated.open();
    await eventually(async () => (await statusOf(app, second!)).status === 'rejected', { what: 'the waiting message ended' });
    expect(await statusOf(app, second!)).toMatchObject({ status_reason: 'opted_out' });
    expect(gated.submitted).toEqual([first]);
  });

  it('quick sends are not checked, unless their profile honours opt-outs (then ended at acceptance)', async () => {
    const receiver = await startReceiver();
    const delivery = new SimulatorDelivery({ seed: 4, latencyMs: [1, 5] });
    const sms = createSmsRouter({
      verifyKey: staticKeys([{ key: KEY, id: 'acme' }]),
      resolveProfile: staticProfiles([
        { code: 'careful', senders: [SHORT_CODE], owners: ['acme'], honourOptOuts: true, inboundUrl: receiver.url },
        { code: 'plain', senders: [SHORT_CODE], owners: ['acme'] },
      ]),
      delivery,
      worker: { pollIntervalMs: 20 },
      dlr: { allowPrivateAddresses: true },
    });
    open.push({ sms, receiver });
    const app = express().use(sms);
    await sms.ready();
    expect(await sms.optOuts.add(SHORT_CODE, SUBSCRIBER)).toBe(true);
    const send = async (profile: string) => {
      const res = await request(app).post('/api/outbox/create').set('X-API-Key', KEY)
        .send({ profile_code: profile, messages: [{ recipient: SUBSCRIBER, message: 'Hi', external_id: profile }] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual([{ external_id: profile, recipient: SUBSCRIBER, sms_count: 1, message_ref: expect.any(String) }]);
      return (res.body as { message_ref: string }[])[0]!.message_ref;
    };
    const plain = await send('plain');
    const careful = await send('careful');
    await eventually(async () => (await statusOf(app, careful)).status === 'rejected', { what: 'the careful profile ended it' });
    expect(await statusOf(app, careful)).toMatchObject({ status_reason: 'opted_out' });
    await eventually(async () => (await statusOf(app, plain)).status === 'delivered', { what: 'the plain profile delivered it' });
    expect(delivery.submitted.map((part) => part.ref)).toEqual([plain]);
    // The short code's owner, its first profile sending from it, gets its MO messages.
    await delivery.simulateInbound({ from: '254711000009', to: SHORT_CODE, text: 'hi' });
    await eventually(() => receiver.received.length === 1, { what: 'the MO forwarded by profile' });
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ data: { profile_code: 'careful' } });
  });

  it('a quick send honouring opt-outs ends only its messages to opted-out numbers and submits the rest', async () => {
    const delivery = new SimulatorDelivery({ seed: 5, latencyMs: [1, 5] });
    const sms = createSmsRouter({
      verifyKey: staticKeys([{ key: KEY, id: 'acme' }]),
      resolveProfile: staticProfiles([{ code: 'careful', senders: [SHORT_CODE], owners: ['acme'], honourOptOuts: true }]),
      delivery,
      worker: { pollIntervalMs: 20 },
    });
    open.push({ sms });
    const app = express().use(sms);
    await sms.ready();
    await sms.optOuts.add(SHORT_CODE, SUBSCRIBER);
    const res = await request(app).post('/api/outbox/create').set('X-API-Key', KEY)
      .send({ profile_code: 'careful', messages: [{ recipient: '254711000008', message: 'Hi' }, { recipient: SUBSCRIBER, message: 'Hi' }, { recipient: '254711000007', message: 'Hi' }] });
    expect(res.status).toBe(200);
    const [first, optedOut, third] = (res.body as { message_ref: string }[]).map((item) => item.message_ref);
    await eventually(async () => (await statusOf(app, optedOut!)).status === 'rejected', { what: 'the opted-out message ended' });
    expect(await statusOf(app, optedOut!)).toMatchObject({ status_reason: 'opted_out' });
    await eventually(async () => (await statusOf(app, first!)).status === 'delivered' && (await statusOf(app, third!)).status === 'delivered', { what: 'the others delivered' });
    expect(delivery.submitted.map((part) => part.ref).sort()).toEqual([first, third].sort());
  });

  it('a confirmation reply goes from the short code to the subscriber, not blocked by the opt-out it confirms', async () => {
    const { delivery } = await gateway([204], {
      inbound: { stopKeywords: ['STOP', 'ARRET'], confirmation: { stop: 'You are unsubscribed. Reply START to come back.' } },
    });
    await delivery.simulateInbound({ from: SUBSCRIBER, to: SHORT_CODE, text: 'arret' });
    await eventually(() => delivery.submitted.length === 1, { what: 'the confirmation submitted' });
    expect(delivery.submitted[0]).toMatchObject({ sender: SHORT_CODE, recipient: SUBSCRIBER, text: 'You are unsubscribed. Reply START to come back.' });
  });

  it('router.optOuts adds, lists and removes, with events from the api', async () => {
    const { sms } = await gateway();
    const events: string[] = [];
    sms.on('subscriber.opted_out', (e) => events.push(`out ${e.number} ${e.source}`));
    sms.on('subscriber.opted_in', (e) => events.push(`in ${e.number} ${e.source}`));
    expect(await sms.optOuts.add(SHORT_CODE, '+254711000003')).toBe(true);
    expect(await sms.optOuts.add(SHORT_CODE, '254711000003')).toBe(false);
    await sms.optOuts.add('30303', '254711000004');
    expect((await sms.optOuts.list()).map((e) => `${e.shortCode} ${e.number}`)).toEqual([`${SHORT_CODE} 254711000003`, '30303 254711000004']);
    expect((await sms.optOuts.list({ shortCode: '30303' })).length).toBe(1);
    expect(await sms.optOuts.remove(SHORT_CODE, '254711000003')).toBe(true);
    expect(await sms.optOuts.has(SHORT_CODE, '254711000003')).toBe(false);
    expect(events).toEqual(['out 254711000003 api', 'out 254711000004 api', 'in 254711000003 api']);
    await expect(sms.optOuts.add('', '1')).rejects.toThrow(TypeError);
  });
});

describe('metrics', () => {
  it('count inbound webhook attempts by result, and opt-out changes by change and source', async () => {
    const registry = new client.Registry();
    const { sms, delivery } = await gateway([500, 204], { metrics: { client, registry } });
    const sent = new Promise<void>((resolve) => sms.once('inbound.sent', () => resolve()));
    await delivery.simulateInbound({ from: SUBSCRIBER, to: SHORT_CODE, text: 'STOP' });
    await sent;
    await sms.optOuts.remove(SHORT_CODE, SUBSCRIBER);
    const value = async (name: string, labels: Record<string, string>) =>
      (await registry.getSingleMetric(name)!.get()).values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
    expect(await value('sms_outbox_inbound_webhook_attempts_total', { result: 'retrying' })).toBe(1);
    expect(await value('sms_outbox_inbound_webhook_attempts_total', { result: 'sent' })).toBe(1);
    expect(await value('sms_outbox_inbound_webhook_attempts_total', { result: 'failed' })).toBe(0);
    expect(await value('sms_outbox_opt_out_changes_total', { change: 'opted_out', source: 'keyword' })).toBe(1);
    expect(await value('sms_outbox_opt_out_changes_total', { change: 'opted_in', source: 'api' })).toBe(1);
    expect(await value('sms_outbox_inbound_messages_total', {})).toBe(1);
  });
});

describe('the inbound option', () => {
  it('is checked at construction', () => {
    const make = (inbound: unknown) => () => createSmsRouter({ verifyKey: staticKeys([{ key: KEY, id: 'a' }]), inbound: inbound as never });
    expect(make({ stopKeyword: ['STOP'] })).toThrow(/Did you mean `stopKeywords`/);
    expect(make({ stopKeywords: ['STOP'], startKeywords: ['stop'] })).toThrow(/both a stop and a start keyword/);
    expect(make({ confirmation: { stop: '' } })).toThrow(/confirmation.stop/);
    expect(make({ resolveOwner: 'x' })).toThrow(/resolveOwner must be a function/);
    expect(() => staticKeys([{ key: KEY, id: 'a', inboundUrl: 'ftp://x' }])).toThrow(/inboundUrl must be an http or https URL/);
  });
});

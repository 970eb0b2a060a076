/**
 * Inbound (MO) webhook recovery through the real router, a simulated carrier and a real
 * receiver, on memory and SQLite: an MO message whose receiver was down is listed by
 * `GET /api/outbox/callbacks?kind=inbound` with its attempts, and `POST .../callbacks/replay`
 * (by ref, or by time with `kind: inbound`) sends it once more, signed anew under the same
 * webhook id; a report list never shows it; the host replays alike
 * (`router.callbacks.replayInbound`); bad input is refused with a coded 422.
 */
import express from 'express';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSmsRouter, MemoryStorage, SimulatorDelivery, staticKeys, type SmsRouter } from '../../src/index.js';
import { localStorages } from '../helpers/fresh-storages.js';
import { startReceiver, type Receiver } from '../dlr/helpers.js';
import { eventually } from '../helpers/poll.js';

const KEY = 'inbound-recovery-key';
const SECRET = `whsec_${Buffer.from('an inbound secret of 32 bytes!!!').toString('base64')}`;
const SHORT_CODE = '22021501';

const cleanups: (() => Promise<void> | void)[] = [];
const open: { sms: SmsRouter; receiver: Receiver }[] = [];
afterEach(async () => {
  for (const { sms, receiver } of open.splice(0)) {
    await sms.close();
    await receiver.close();
  }
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const STORAGES = localStorages('inbound-callbacks', cleanups);

for (const storage of STORAGES) {
  describe(`inbound webhook recovery on ${storage.name}`, () => {
    /** A gateway whose principal's MO webhooks go to a receiver that answers 503 until `up.now`; one attempt each. */
    async function outage() {
      const up = { now: false };
      const receiver = await startReceiver(() => ({ status: up.now ? 204 : 503 }));
      const delivery = new SimulatorDelivery({ seed: 7, latencyMs: [1, 5] });
      const sms = createSmsRouter({
        verifyKey: staticKeys([{ key: KEY, id: 'acme', profiles: [SHORT_CODE], inboundUrl: `${receiver.origin}/inbound`, callbackSecret: SECRET }]),
        storage: storage.make(),
        delivery,
        worker: { pollIntervalMs: 20 },
        dlr: { allowPrivateAddresses: true, schedule: [0], pollIntervalMs: 20 },
      });
      open.push({ sms, receiver });
      await sms.ready();
      const failed: string[] = [];
      const sent: string[] = [];
      sms.on('inbound.failed', (event) => void failed.push(event.inbound.ref));
      sms.on('inbound.sent', (event) => void sent.push(event.inbound.ref));
      const app = express().use(sms);
      /** An MO message from `from` that the receiver (down) fails; resolves once it has failed. */
      const moFails = async (from: string): Promise<void> => {
        const before = failed.length;
        await delivery.simulateInbound({ from: `+${from}`, to: SHORT_CODE, text: `Hello from ${from}` });
        await eventually(() => failed.length > before, { what: 'the MO webhook failed' });
      };
      const list = (query: string) => request(app).get(`/api/outbox/callbacks?${query}`).set('X-API-Key', KEY);
      const replay = (body: object) => request(app).post('/api/outbox/callbacks/replay').set('X-API-Key', KEY).send(body);
      return { sms, up, receiver, failed, sent, moFails, list, replay, url: `${receiver.origin}/inbound` };
    }

    it('lists a failed MO webhook by kind=inbound; a replay by ref delivers it once more, signed anew under the same id', async () => {
      const o = await outage();
      await o.moFails('254711000001');
      const listed = await o.list('kind=inbound&state=failed');
      expect(listed.status).toBe(200);
      expect(listed.body.callbacks).toEqual([
        {
          kind: 'inbound',
          message_ref: o.failed[0],
          from: '254711000001',
          to: SHORT_CODE,
          received_at: expect.any(String),
          callback: { url: o.url, state: 'failed', attempts: 1, last_status_code: 503, last_error: 'HTTP 503', next_attempt_at: null },
        },
      ]);
      expect(listed.body.next).toBeNull();
      expect((await o.list('state=failed')).body.callbacks, 'the default kind lists reports only').toEqual([]);

      o.up.now = true;
      expect((await o.replay({ ids: [o.failed[0]!, 'not-a-ref'] })).body).toEqual({ queued: 1 });
      await eventually(() => o.sent.length === 1, { what: 'the replayed webhook delivered' });
      expect(o.receiver.requests).toHaveLength(2);
      const [first, again] = o.receiver.requests;
      expect(again!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
      expect(again!.body).toBe(first!.body);
      const verified = new Webhook(SECRET).verify(again!.body, again!.headers as Record<string, string>) as { data: { message_ref: string } };
      expect(verified.data.message_ref).toBe(o.failed[0]);
      expect((await o.list('kind=inbound')).body.callbacks, 'a delivered webhook leaves the list').toEqual([]);
      expect((await o.replay({ ids: [o.failed[0]!] })).body, 'a delivered webhook is not replayed again').toEqual({ queued: 0 });
      expect(o.receiver.requests).toHaveLength(2);
    });

    it('replays by time with kind=inbound, paging the list by its own cursor', async () => {
      const o = await outage();
      const since = new Date(Date.now() - 1000).toISOString();
      for (const from of ['254711000001', '254711000002', '254711000003']) await o.moFails(from);
      const first = await o.list('kind=inbound&limit=2');
      expect(first.body.callbacks).toHaveLength(2);
      const second = await o.list(`kind=inbound&limit=2&cursor=${first.body.next}`);
      const refs = [...first.body.callbacks, ...second.body.callbacks].map((item: { message_ref: string }) => item.message_ref);
      expect(refs).toEqual([...o.failed].reverse());
      expect(second.body.next).toBeNull();
      o.up.now = true;
      expect((await o.replay({ since })).body, 'a range without kind replays reports').toEqual({ queued: 0 });
      expect((await o.replay({ kind: 'inbound', since })).body).toEqual({ queued: 3 });
      await eventually(() => o.sent.length === 3, { what: 'every replayed webhook delivered' });
      expect([...o.sent].sort()).toEqual([...o.failed].sort());
    });

    it('router.callbacks.replayInbound: the host replays a principal\u2019s failed MO webhooks', async () => {
      const o = await outage();
      await o.moFails('254711000001');
      o.up.now = true;
      expect(await o.sms.callbacks.replayInbound({ principalId: 'globex', refs: [o.failed[0]!] }), 'another principal\u2019s: none').toBe(0);
      expect(await o.sms.callbacks.replayInbound({ principalId: 'acme', refs: [o.failed[0]!] })).toBe(1);
      await eventually(() => o.sent.length === 1, { what: 'the replayed webhook delivered' });
      expect(o.sent).toEqual(o.failed);
    });

    it('refuses a bad kind with a coded 422 and replays nothing', async () => {
      const o = await outage();
      await o.moFails('254711000001');
      expect((await o.list('kind=mo')).body).toEqual({ details: 'kind: must be one of report, inbound', code: 'INVALID_LIST_QUERY' });
      const bad = await o.replay({ kind: 'mo', ids: [o.failed[0]!] });
      expect(bad.status).toBe(422);
      expect(bad.body).toEqual({ details: 'kind: must be one of report, inbound', code: 'INVALID_REPLAY' });
      expect((await o.replay({ kind: 'report', ids: [o.failed[0]!] })).body, 'an inbound ref is not a report').toEqual({ queued: 0 });
      expect((await o.list('kind=inbound&state=failed')).body.callbacks).toHaveLength(1);
    });
  });
}

describe('inbound webhook recovery on a storage without it', () => {
  it('refuses kind=inbound with a coded 422; ids replay reports only', async () => {
    const storage = new MemoryStorage();
    // A storage keeping inbound messages but not their recovery (a custom adapter written before it).
    Object.assign(storage, { listInboundWebhooks: undefined, replayInboundWebhooks: undefined });
    const receiver = await startReceiver();
    const sms = createSmsRouter({ verifyKey: staticKeys([{ key: KEY, id: 'acme', profiles: [SHORT_CODE] }]), storage, delivery: new SimulatorDelivery({ seed: 7 }) });
    open.push({ sms, receiver });
    await sms.ready();
    const app = express().use(sms);
    const list = await request(app).get('/api/outbox/callbacks?kind=inbound').set('X-API-Key', KEY);
    expect(list.status).toBe(422);
    expect(list.body).toEqual({ details: 'kind: this storage keeps no inbound webhooks to recover', code: 'INVALID_LIST_QUERY' });
    const replay = (body: object) => request(app).post('/api/outbox/callbacks/replay').set('X-API-Key', KEY).send(body);
    expect((await replay({ kind: 'inbound', ids: ['a-ref'] })).body).toEqual({ details: 'kind: this storage keeps no inbound webhooks to recover', code: 'INVALID_REPLAY' });
    expect((await replay({ ids: ['a-ref'] })).body).toEqual({ queued: 0 });
  });
});

/**
 * `GET /api/outbox/callbacks` and `POST /api/outbox/callbacks/replay` through the real
 * router and a real receiver, on memory and SQLite: failed reports listed with their
 * attempts and paged, another principal's never shown nor replayed, a replay by ref and by
 * time sends them again, and coded refusals of bad input that store nothing.
 */
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { localStorages } from '../helpers/fresh-storages.js';
import { createGateway, KEY, OTHER_KEY, type TestGateway } from '../helpers/gateway.js';
import { ScriptedDelivery } from '../helpers/scripted-delivery.js';
import { startReceiver, type Receiver } from '../dlr/helpers.js';
import { eventually } from '../helpers/poll.js';

const cleanups: (() => Promise<void> | void)[] = [];
const gateways: TestGateway[] = [];
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.sms.close();
  for (const receiver of receivers.splice(0)) await receiver.close();
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const STORAGES = localStorages('callbacks', cleanups);

/** A later time than any test runs at: a message sent for it stays `scheduled` until cancelled. */
const LATER = new Date(Date.now() + 86_400_000).toISOString();

/** Sends one scheduled message of OTHER_KEY's (profile 99999) reporting to `url`, and cancels it: its report is made at once; its ref. */
async function endWithReport(app: Express, url: string): Promise<string> {
  const sent = await request(app)
    .post('/api/outbox/create')
    .set('X-API-Key', OTHER_KEY)
    .send({ profile_code: '99999', send_at: LATER, dlr_callback_url: url, messages: [{ recipient: '254712345678', message: 'Hello' }] });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  const ref = (sent.body as { message_ref: string }[])[0]!.message_ref;
  await request(app).delete(`/api/outbox/messages/${ref}`).set('X-API-Key', OTHER_KEY).expect(200);
  return ref;
}

const list = (app: Express, query = '', key = OTHER_KEY) => request(app).get(`/api/outbox/callbacks${query === '' ? '' : `?${query}`}`).set('X-API-Key', key);
const replay = (app: Express, body: unknown, key = OTHER_KEY) => request(app).post('/api/outbox/callbacks/replay').set('X-API-Key', key).send(body as object);
const refsOf = (res: request.Response): string[] => (res.body as { callbacks: { message_ref: string }[] }).callbacks.map((item) => item.message_ref);

for (const storage of STORAGES) {
  describe(`report recovery endpoints on ${storage.name}`, () => {
    /** A gateway whose reports go to a receiver that answers 500 until `fixed.now`; each report gets one attempt. */
    async function outage() {
      const fixed = { now: false };
      const receiver = await startReceiver(() => ({ status: fixed.now ? 200 : 500 }));
      receivers.push(receiver);
      const gateway = createGateway({ storage: storage.make(), delivery: new ScriptedDelivery(), dlr: { schedule: [0], allowPrivateAddresses: ['127.0.0.0/8'], pollIntervalMs: 10 } });
      gateways.push(gateway);
      await gateway.sms.ready();
      const failed: string[] = [];
      const sent: string[] = [];
      gateway.sms.on('dlr.failed', (event) => void failed.push(event.message.ref));
      gateway.sms.on('dlr.sent', (event) => void sent.push(event.message.ref));
      /** Resolves once `events` holds `count` refs. */
      const reach = (events: string[], count: number) => eventually(() => events.length >= count, { what: `${count} report events` });
      return { app: gateway.app, url: `${receiver.origin}/dlr`, fixed, failed, sent, reach, receiver };
    }

    it('lists the caller\u2019s failed reports newest first with their attempts, paged; another caller sees none', async () => {
      const o = await outage();
      const refs = [await endWithReport(o.app, o.url), await endWithReport(o.app, o.url), await endWithReport(o.app, o.url)];
      await o.reach(o.failed, 3);
      const res = await list(o.app, 'state=failed');
      expect(res.status).toBe(200);
      expect(refsOf(res).sort()).toEqual([...refs].sort());
      expect(res.body.callbacks[0]).toMatchObject({
        kind: 'report',
        status: 'cancelled',
        callback: { url: o.url, state: 'failed', attempts: 1, last_status_code: 500, last_error: 'HTTP 500', next_attempt_at: null },
      });
      const first = await list(o.app, 'state=failed&limit=2');
      expect(first.body.callbacks).toHaveLength(2);
      const second = await list(o.app, `state=failed&limit=2&cursor=${first.body.next}`);
      expect([...refsOf(first), ...refsOf(second)]).toEqual(refsOf(res));
      expect(second.body.next).toBeNull();
      expect((await list(o.app, 'state=pending')).body).toEqual({ callbacks: [], next: null });
      expect((await list(o.app, '', KEY)).body).toEqual({ callbacks: [], next: null });
      expect((await list(o.app, `since=${new Date(Date.now() + 60_000).toISOString()}`)).body.callbacks).toEqual([]);
    });

    it('replays failed reports by ref and by time, each delivered once more; never another caller\u2019s', async () => {
      const o = await outage();
      const refs = [await endWithReport(o.app, o.url), await endWithReport(o.app, o.url), await endWithReport(o.app, o.url)];
      await o.reach(o.failed, 3);
      o.fixed.now = true;
      // KEY's scopes (`quick`, `premium`) do not grant replays; OTHER_KEY has no `scopes`: every permission.
      expect((await replay(o.app, { ids: refs }, KEY)).body).toEqual({ details: 'API key lacks the callbacks scope', code: 'CALLBACKS_SCOPE_DENIED' });
      const one = await replay(o.app, { ids: [refs[0], 'not-a-ref'] });
      expect(one.status).toBe(200);
      expect(one.body).toEqual({ queued: 1 });
      await o.reach(o.sent, 1);
      expect(o.sent).toEqual([refs[0]]);
      const rest = await replay(o.app, { since: new Date(Date.now() - 60_000).toISOString() });
      expect(rest.body).toEqual({ queued: 2 });
      await o.reach(o.sent, 3);
      expect([...o.sent].sort()).toEqual([...refs].sort());
      expect((await list(o.app)).body.callbacks).toEqual([]);
      // A delivered report is not replayed again.
      expect((await replay(o.app, { ids: refs })).body).toEqual({ queued: 0 });
      expect(o.receiver.requests.filter((r) => r.body.includes(refs[0]!))).toHaveLength(2);
    });

    it('router.callbacks: a URL failing past dlr.pauseAfterMs is listed as paused and resumed by the host', async () => {
      const receiver = await startReceiver(() => ({ status: 500 }));
      receivers.push(receiver);
      const gateway = createGateway({
        storage: storage.make(),
        delivery: new ScriptedDelivery(),
        dlr: { schedule: [0, 20], pauseAfterMs: 10, allowPrivateAddresses: ['127.0.0.0/8'], pollIntervalMs: 10 },
      });
      gateways.push(gateway);
      const paused: string[] = [];
      const resumed: string[] = [];
      gateway.sms.on('callback.endpoint_paused', (event) => void paused.push(event.url));
      gateway.sms.on('callback.endpoint_resumed', (event) => void resumed.push(event.by));
      const url = `${receiver.origin}/dlr`;
      await endWithReport(gateway.app, url);
      await eventually(() => paused.length === 1, { what: 'the pause' });
      expect(gateway.sms.callbacks.paused()).toEqual([{ url, failingSince: expect.any(Number) }]);
      expect(gateway.sms.callbacks.resume(url)).toBe(true);
      expect(resumed).toEqual(['api']);
      expect(gateway.sms.callbacks.paused()).toEqual([]);
    });

    it('refuses bad input with a coded 4xx and replays nothing', async () => {
      const o = await outage();
      const ref = await endWithReport(o.app, o.url);
      await o.reach(o.failed, 1);
      const bad: [unknown, string][] = [
        [{}, 'since: give since and/or until, or ids'],
        [{ ids: [] }, 'ids: must be a list of 1 to 1000 message refs'],
        [{ ids: [ref, 7] }, 'ids: must be a list of 1 to 1000 message refs'],
        [{ ids: [ref], since: '2026-01-01T00:00:00Z' }, 'ids: give either ids or since/until, not both'],
        [{ since: 'yesterday' }, 'since: must be an RFC 3339 date-time (2026-01-31T14:00:00Z)'],
        [{ since: '2026-02-01T00:00:00Z', until: '2026-01-01T00:00:00Z' }, 'since: must be before until'],
        [{ every: true }, 'every: is not a field of a replay (kind, since, until, ids)'],
        [[ref], 'body: must be an object with since/until or ids'],
      ];
      for (const [body, details] of bad) {
        const res = await replay(o.app, body);
        expect(res.status, JSON.stringify(body)).toBe(422);
        expect(res.body).toEqual({ details, code: 'INVALID_REPLAY' });
      }
      expect((await list(o.app, 'state=failed')).body.callbacks).toHaveLength(1);
      expect((await list(o.app, 'state=delivered')).body.code).toBe('INVALID_LIST_QUERY');
      expect((await list(o.app, 'states=failed')).body.code).toBe('INVALID_LIST_QUERY');
      expect((await list(o.app, 'cursor=nope')).body.code).toBe('INVALID_CURSOR');
      expect((await list(o.app, 'limit=0')).body.code).toBe('INVALID_LIST_QUERY');
    });
  });
}

import { afterEach, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createGateway, KEY, OTHER_KEY, QUICK_ONLY_KEY } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';
import { DeliveryError, MemoryStorage, staticKeys, staticProfiles, type DeliveryAdapter, type MessageStatusEvent, type OutgoingPart, type SmsRouter } from '../../src/index.js';

const BASE = '/api/outbox';
const T = Date.UTC(2026, 11, 1, 8, 0, 0);

/** A clock the test moves. */
function clock(start = T) {
  let at = start;
  return { now: () => at, advance: (ms: number) => void (at += ms) };
}

/** A carrier that refuses every submit while `down` (a dropped connection), and records those it accepts. */
class FlakyCarrier implements DeliveryAdapter {
  down = false;
  readonly accepted: OutgoingPart[] = [];
  async start(): Promise<void> {}
  async submit(part: OutgoingPart) {
    if (this.down) throw new DeliveryError('carrier unreachable', { retryAfterMs: 10 });
    this.accepted.push(part);
    return { carrierId: `c-${this.accepted.length}` };
  }
  async close(): Promise<void> {}
}

const routers: SmsRouter[] = [];
afterEach(async () => {
  await Promise.all(routers.splice(0).map((sms) => sms.close()));
});

function gateway(options: Parameters<typeof createGateway>[0] = {}) {
  const gw = createGateway({ rateLimit: false, worker: { pollIntervalMs: 10, retryBaseMs: 5, retryMaxMs: 20 }, ...options });
  routers.push(gw.sms);
  return gw;
}

const quick = (extra: Record<string, unknown>, externalId = 'x-1') => ({
  profile_code: '12345',
  messages: [{ recipient: '254712345678', message: 'Your code is 1234', external_id: externalId }],
  ...extra,
});

describe('send_at and validity_period: validation', () => {
  it.each([
    [{ send_at: 'tomorrow' }, 'send_at: must be an RFC 3339 time such as 2026-12-01T09:00:00Z, or Unix seconds'],
    [{ send_at: '2026-12-01 09:00' }, 'send_at: must be an RFC 3339 time such as 2026-12-01T09:00:00Z, or Unix seconds'],
    [{ send_at: 1.5 }, 'send_at: must be a string or an integer'],
    [{ send_at: true }, 'send_at: must be a string or an integer'],
    [{ send_at: -1 }, 'send_at: must be at least 0'],
    [{ send_at: new Date(T + 31 * 86_400_000).toISOString() }, 'send_at: must be at most 30 days ahead'],
    [{ validity_period: 29 }, 'validity_period: must be at least 30'],
    [{ validity_period: 172_801 }, 'validity_period: must be at most 172800'],
    [{ validity_period: '600' }, 'validity_period: must be an integer'],
  ])('%j is a 422 naming the field', async (extra, details) => {
    const { app } = gateway({ now: clock().now });
    const res = await request(app).post(`${BASE}/create`).set('X-API-Key', KEY).send(quick(extra));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ details, code: 'VALIDATION_FAILED' });
  });

  // Date.parse rolls an impossible date over: 2026-11-31 would be scheduled for December 1.
  it.each(['2026-11-31T09:00:00Z', '2026-12-01T24:00:00Z', '2026-02-29T09:00:00Z', '2026-12-01T09:00:00+24:00', '2026-12-00T09:00:00Z'])(
    'an impossible time %s is a 422 like any malformed one, and stores nothing',
    async (sendAt) => {
      const { app } = gateway({ now: clock().now });
      const res = await request(app).post(`${BASE}/create`).set('X-API-Key', KEY).send(quick({ send_at: sendAt }, 'impossible'));
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ details: 'send_at: must be an RFC 3339 time such as 2026-12-01T09:00:00Z, or Unix seconds', code: 'VALIDATION_FAILED' });
      const lookup = await request(app).get(`${BASE}/delivery-status?external_id=impossible`).set('X-API-Key', KEY);
      expect(lookup.body).toEqual([]);
    },
  );

  it('takes the real last days of months, a leap day and lower-case separators', async () => {
    const { app } = gateway({ now: clock(Date.UTC(2028, 1, 20)).now });
    for (const [sendAt, due] of [
      ['2028-02-29T23:59:59Z', Date.UTC(2028, 1, 29, 23, 59, 59)],
      ['2028-03-01T00:00:00-01:00', Date.UTC(2028, 2, 1, 1)],
      ['2028-03-20t10:00:00.5z', Date.UTC(2028, 2, 20, 10, 0, 0, 500)],
      ['2028-02-21 12:30:00+03:00', Date.UTC(2028, 1, 21, 9, 30)],
    ] as const) {
      const res = await request(app).post(`${BASE}/create`).set('X-API-Key', KEY).send(quick({ send_at: sendAt }));
      expect(res.status).toBe(200);
      const status = await request(app).get(`${BASE}/delivery-status/${res.body[0].message_ref}`).set('X-API-Key', KEY);
      expect(status.body.send_at).toBe(new Date(due).toISOString());
    }
  });

  it('the premium endpoint, both forms, takes them and checks them the same way', async () => {
    const { app } = gateway({ now: clock().now });
    const list = { profile_code: '22021501', to: ['254712345678'], message: 'Hi', send_at: 'soon' };
    const refused = await request(app).post(`${BASE}/premium`).set('X-API-Key', KEY).send(list);
    expect(refused.body.details).toMatch(/^send_at: /);
    const ok = await request(app)
      .post(`${BASE}/premium`)
      .set('X-API-Key', KEY)
      .send({ ...list, send_at: Math.floor(T / 1000) + 3600, validity_period: 600 });
    expect(ok.status).toBe(200);
    // The answer's shape is the published one, unchanged.
    expect(Object.keys(ok.body[0]).sort()).toEqual(['message_id', 'message_ref', 'sms_count', 'to']);
    const status = await request(app).get(`${BASE}/delivery-status/${ok.body[0].message_ref}`).set('X-API-Key', KEY);
    expect(status.body).toMatchObject({
      status: 'scheduled',
      send_at: new Date(T + 3_600_000).toISOString(),
      valid_until: new Date(T + 3_600_000 + 600_000).toISOString(),
    });
  });
});

describe('send_at', () => {
  it('waits scheduled, visible in the status, and is sent once it is due', async () => {
    const time = clock();
    const carrier = new FlakyCarrier();
    const { app, sms } = gateway({ now: time.now, delivery: carrier });
    const changes: MessageStatusEvent[] = [];
    sms.on('message.status', (event) => changes.push(event));
    const sent = await request(app)
      .post(`${BASE}/create`)
      .set('X-API-Key', KEY)
      .send(quick({ send_at: new Date(T + 60_000).toISOString() }));
    expect(sent.status).toBe(200);
    const ref = sent.body[0].message_ref as string;
    const status = () => request(app).get(`${BASE}/delivery-status/${ref}`).set('X-API-Key', KEY);
    expect((await status()).body.status).toBe('scheduled');
    // A message sent after it, for now, goes first: the scheduled one waits for its time.
    const now = await request(app).post(`${BASE}/create`).set('X-API-Key', KEY).send(quick({}, 'x-now'));
    await eventually(() => carrier.accepted.length === 1);
    expect(carrier.accepted.map((part) => part.ref)).toEqual([now.body[0].message_ref]);
    expect((await status()).body.status).toBe('scheduled');
    time.advance(60_000);
    await eventually(() => carrier.accepted.length === 2);
    expect(carrier.accepted[1]!.ref).toBe(ref);
    await eventually(async () => (await status()).body.status === 'submitted');
    expect(changes.filter((e) => e.message.ref === ref).map((e) => [e.previousState, e.message.state])).toEqual([
      ['scheduled', 'queued'],
      ['queued', 'submitted'],
    ]);
  });

  it('a time in the past means now', async () => {
    const carrier = new FlakyCarrier();
    const { app } = gateway({ now: clock().now, delivery: carrier });
    const sent = await request(app).post(`${BASE}/create`).set('X-API-Key', KEY).send(quick({ send_at: 0 }));
    expect(sent.status).toBe(200);
    await eventually(() => carrier.accepted.length === 1);
  });

  it('is refused with 422 when the storage cannot keep it', async () => {
    const storage = new MemoryStorage();
    const bare = Object.assign(Object.create(storage) as MemoryStorage, { promoteScheduled: undefined });
    const { app } = gateway({ now: clock().now, storage: bare });
    const res = await request(app).post(`${BASE}/create`).set('X-API-Key', KEY).send(quick({ send_at: new Date(T + 60_000).toISOString() }));
    expect(res.status).toBe(422);
    expect(res.body.details).toBe("send_at: this gateway's storage cannot keep it");
  });
});

describe('validity_period', () => {
  it('a message whose validity ends while the carrier is down is never submitted: it ends expired, with its report', async () => {
    const time = clock();
    const carrier = new FlakyCarrier();
    carrier.down = true;
    const { app, sms } = gateway({ now: time.now, delivery: carrier });
    const ended = new Promise<MessageStatusEvent>((resolve) => sms.on('message.status', (e) => e.message.state === 'expired' && resolve(e)));
    const retried = new Promise<void>((resolve) => sms.once('message.retrying', () => resolve()));
    const res = await request(app).post(`${BASE}/create`).set('X-API-Key', KEY).send(quick({ validity_period: 30 }));
    const ref = res.body[0].message_ref as string;
    await retried;
    time.advance(31_000);
    carrier.down = false;
    const event = await ended;
    expect(event.message).toMatchObject({ ref, state: 'expired', statusReason: 'validity_period_elapsed' });
    // The carrier is up, and takes the next message at once; it never saw the expired one.
    const next = await request(app).post(`${BASE}/create`).set('X-API-Key', KEY).send(quick({}, 'x-2'));
    await eventually(() => carrier.accepted.length === 1);
    expect(carrier.accepted.map((part) => part.ref)).toEqual([next.body[0].message_ref]);
    const status = await request(app).get(`${BASE}/delivery-status/${ref}`).set('X-API-Key', KEY);
    expect(status.body).toMatchObject({ status: 'expired', status_reason: 'validity_period_elapsed' });
  });

  it('a profile may set a default, and the carrier is told what is left of it', async () => {
    const time = clock();
    const carrier = new FlakyCarrier();
    const { app } = gateway({
      now: time.now,
      delivery: carrier,
      verifyKey: staticKeys([{ key: 'otp-key', id: 'bank', profiles: ['OTP'] }]),
      resolveProfile: staticProfiles([{ code: 'OTP', owners: ['bank'], validityPeriod: 300 }]),
    });
    await request(app).post(`${BASE}/create`).set('X-API-Key', 'otp-key').send({ ...quick({}), profile_code: 'OTP' });
    await eventually(() => carrier.accepted.length === 1);
    expect(carrier.accepted[0]!.validitySeconds).toBe(300);
  });
});

describe('cancel', () => {
  it('cancels a scheduled message: 200 with both lists, its state cancelled, and a second cancel names it', async () => {
    const carrier = new FlakyCarrier();
    const time = clock();
    const { app, sms } = gateway({ now: time.now, delivery: carrier });
    const changes: MessageStatusEvent[] = [];
    sms.on('message.status', (event) => changes.push(event));
    const sent = await request(app).post(`${BASE}/create`).set('X-API-Key', KEY).send(quick({ send_at: new Date(T + 60_000).toISOString() }));
    const ref = sent.body[0].message_ref as string;
    const res = await request(app).delete(`${BASE}/messages/${ref}`).set('X-API-Key', KEY);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ cancelled: [ref], not_cancelled: [] });
    expect(changes.map((e) => [e.previousState, e.message.state, e.message.statusReason])).toEqual([['scheduled', 'cancelled', 'cancelled']]);
    const again = await request(app).delete(`${BASE}/messages/${ref}`).set('X-API-Key', KEY);
    expect(again.body).toEqual({ cancelled: [], not_cancelled: [{ message_ref: ref, status: 'cancelled' }] });
    const status = await request(app).get(`${BASE}/delivery-status/${ref}`).set('X-API-Key', KEY);
    expect(status.body).toMatchObject({ status: 'cancelled', status_reason: 'cancelled' });
    // Past its time, a message sent now goes, and the cancelled one never does.
    time.advance(120_000);
    const next = await request(app).post(`${BASE}/create`).set('X-API-Key', KEY).send(quick({}, 'x-2'));
    await eventually(() => carrier.accepted.length === 1);
    expect(carrier.accepted.map((part) => part.ref)).toEqual([next.body[0].message_ref]);
  });

  it('names a message that has gone with its status, and answers 404 for another key\u2019s or an unknown ref', async () => {
    const carrier = new FlakyCarrier();
    const { app } = gateway({ now: clock().now, delivery: carrier });
    const sent = await request(app).post(`${BASE}/create`).set('X-API-Key', KEY).send(quick({}));
    const ref = sent.body[0].message_ref as string;
    await eventually(async () => (await request(app).get(`${BASE}/delivery-status/${ref}`).set('X-API-Key', KEY)).body.status === 'submitted');
    const gone = await request(app).delete(`${BASE}/messages/${ref}`).set('X-API-Key', KEY);
    expect(gone.body).toEqual({ cancelled: [], not_cancelled: [{ message_ref: ref, status: 'submitted' }] });
    for (const [key, path] of [[OTHER_KEY, ref], [KEY, '0190d5a1-0000-7000-8000-000000000000']] as const) {
      const res = await request(app).delete(`${BASE}/messages/${path}`).set('X-API-Key', key);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
  });

  it('cancels a batch by external_id with a quick-only key, and refuses a missing external_id', async () => {
    const { app } = gateway({ now: clock().now, delivery: new FlakyCarrier() });
    const later = new Date(T + 60_000).toISOString();
    const batch = {
      profile_code: '12345',
      send_at: later,
      messages: ['254712345671', '254712345672'].map((recipient) => ({ recipient, message: 'Sale', external_id: 'campaign-7' })),
    };
    const sent = await request(app).post(`${BASE}/create`).set('X-API-Key', QUICK_ONLY_KEY).send(batch);
    const refs = (sent.body as { message_ref: string }[]).map((item) => item.message_ref).sort();
    const res = await request(app).delete(`${BASE}/messages?external_id=campaign-7`).set('X-API-Key', QUICK_ONLY_KEY);
    expect(res.status).toBe(200);
    expect([...res.body.cancelled].sort()).toEqual(refs);
    const none = await request(app).delete(`${BASE}/messages?external_id=campaign-7`).set('X-API-Key', KEY);
    expect(none.status).toBe(404);
    const missing = await request(app).delete(`${BASE}/messages`).set('X-API-Key', KEY);
    expect(missing.status).toBe(422);
    expect(missing.body.details).toBe('external_id: is required (one query parameter)');
  });

  it('answers other methods on the cancel paths 405 with Allow: DELETE', async () => {
    const { app } = gateway({ now: clock().now });
    const res = await request(app).get(`${BASE}/messages/anything`).set('X-API-Key', KEY);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('DELETE, OPTIONS');
  });
});

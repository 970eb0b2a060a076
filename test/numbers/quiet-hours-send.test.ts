/**
 * Quiet hours as a caller sees them: a bulk message accepted inside its profile's window is
 * stored `scheduled` until the window ends and sent then, a transactional one goes at once,
 * and a validity period that ends inside the window ends the message `expired`, unsent.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { staticKeys, staticProfiles, type MessageAcceptedEvent, type MessageStatusEvent, type SmsRouter } from '../../src/index.js';
import { createGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';
import { RecordingCarrier } from '../helpers/recording-carrier.js';

/** 22:30 in Nairobi (UTC+3): inside 21:00-08:00. The window ends at 05:00 UTC the next day. */
const LATE_EVENING = Date.UTC(2026, 5, 10, 19, 30);
const WINDOW_END = Date.UTC(2026, 5, 11, 5, 0);

const routers: SmsRouter[] = [];
afterEach(async () => {
  await Promise.all(routers.splice(0).map((sms) => sms.close()));
});

function setUp() {
  let at = LATE_EVENING;
  const carrier = new RecordingCarrier();
  const night = { from: '21:00', to: '08:00' };
  const { app, sms } = createGateway({
    now: () => at,
    rateLimit: false,
    delivery: carrier,
    worker: { pollIntervalMs: 10 },
    verifyKey: staticKeys([{ key: 'k', id: 'shop' }]),
    resolveProfile: staticProfiles([
      { code: 'promo', owners: ['shop'], quietHours: night, timeZone: 'Africa/Nairobi' },
      { code: 'otp', owners: ['shop'], priority: 'transactional', quietHours: night, timeZone: 'Africa/Nairobi' },
    ]),
  });
  routers.push(sms);
  const send = (profile: string, extra: Record<string, unknown> = {}) =>
    request(app)
      .post('/api/outbox/create')
      .set('X-API-Key', 'k')
      .send({ profile_code: profile, messages: [{ recipient: '254712345678', message: 'Hi' }], ...extra })
      .expect(200);
  const status = async (ref: string) => (await request(app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', 'k').expect(200)).body;
  return { sms, carrier, send, status, advanceTo: (ms: number) => void (at = ms) };
}

describe('quiet hours', () => {
  it('hold a bulk message until the window ends, then send it', async () => {
    const { sms, carrier, send, status, advanceTo } = setUp();
    const accepted: MessageAcceptedEvent[] = [];
    sms.on('message.accepted', (event) => accepted.push(event));
    const ref = (await send('promo')).body[0].message_ref as string;
    expect(await status(ref)).toMatchObject({ status: 'scheduled', send_at: new Date(WINDOW_END).toISOString() });
    expect(accepted[0]!.message).toMatchObject({ holdReason: 'quiet_hours', sendAt: WINDOW_END });
    advanceTo(WINDOW_END - 60_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(carrier.accepted).toEqual([]);
    advanceTo(WINDOW_END);
    await eventually(() => carrier.accepted.length === 1);
    expect(carrier.accepted[0]!.ref).toBe(ref);
  });

  it('never hold a transactional message', async () => {
    const { carrier, send } = setUp();
    const ref = (await send('otp')).body[0].message_ref as string;
    await eventually(() => carrier.accepted.length === 1);
    expect(carrier.accepted[0]!.ref).toBe(ref);
  });

  it('leave a validity period that ends inside the window to end the message expired when the window ends, unsent', async () => {
    const { sms, carrier, send, advanceTo } = setUp();
    const ended = new Promise<MessageStatusEvent>((resolve) => sms.on('message.status', (e) => e.message.state === 'expired' && resolve(e)));
    const ref = (await send('promo', { validity_period: 3600 })).body[0].message_ref as string;
    advanceTo(WINDOW_END);
    const event = await ended;
    expect(event.message).toMatchObject({ ref, statusReason: 'validity_period_elapsed' });
    expect(carrier.accepted).toEqual([]);
  });

  it('let a message due outside the window go at once', async () => {
    const { carrier, send, advanceTo } = setUp();
    advanceTo(Date.UTC(2026, 5, 11, 9, 0));
    await send('promo');
    await eventually(() => carrier.accepted.length === 1);
  });
});

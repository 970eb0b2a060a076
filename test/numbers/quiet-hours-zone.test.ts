/**
 * Whose night quiet hours keep: the recipient's, from the number's country where the country
 * keeps one clock (Kenya, Nigeria, Germany, India, the UK), from the profile's `timeZone`
 * where it has several (the US), and nobody's where neither tells (a US number and no
 * `timeZone`: sent at once).
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { staticKeys, staticProfiles, type SmsRouter } from '../../src/index.js';
import { countryZone } from '../../src/numbers/recipient-zone.js';
import { createGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';
import { RecordingCarrier } from '../helpers/recording-carrier.js';

/** 02:00 UTC on 11 June 2026: night in Europe and Africa, late evening in New York, morning in India. */
const AT = Date.UTC(2026, 5, 11, 2, 0);
const iso = (ms: number): string => new Date(ms).toISOString();

/** Each recipient, and when its 21:00-08:00 window ends (08:00 local), as an instant. */
const RECIPIENTS = {
  kenya: ['254712345678', iso(Date.UTC(2026, 5, 11, 5, 0))], // 05:00 EAT, UTC+3
  nigeria: ['2348031234567', iso(Date.UTC(2026, 5, 11, 7, 0))], // 03:00 WAT, UTC+1
  germany: ['4915123456789', iso(Date.UTC(2026, 5, 11, 6, 0))], // 04:00 CEST, UTC+2
  uk: ['447400123456', iso(Date.UTC(2026, 5, 11, 7, 0))], // 03:00 BST, UTC+1
  india: ['919876543210', iso(Date.UTC(2026, 5, 11, 2, 30))], // 07:30 IST, UTC+5:30
  us: ['12025550123', iso(Date.UTC(2026, 5, 11, 12, 0))], // 22:00 EDT in the profile's New York, UTC-4
} as const;

const routers: SmsRouter[] = [];
afterEach(async () => {
  await Promise.all(routers.splice(0).map((sms) => sms.close()));
});

function setUp() {
  const carrier = new RecordingCarrier();
  const night = { from: '21:00', to: '08:00' };
  const { app, sms } = createGateway({
    now: () => AT,
    rateLimit: false,
    delivery: carrier,
    worker: { pollIntervalMs: 10 },
    verifyKey: staticKeys([{ key: 'k', id: 'shop' }]),
    resolveProfile: staticProfiles([
      { code: 'promo', owners: ['shop'], quietHours: night, timeZone: 'America/New_York' },
      { code: 'promo-no-zone', owners: ['shop'], quietHours: night },
    ]),
  });
  routers.push(sms);
  const send = async (profile: string, recipients: readonly string[]): Promise<string[]> => {
    const messages = recipients.map((recipient) => ({ recipient, message: 'Sale tonight' }));
    const answer = await request(app).post('/api/outbox/create').set('X-API-Key', 'k').send({ profile_code: profile, messages }).expect(200);
    return (answer.body as { message_ref: string }[]).map((item) => item.message_ref);
  };
  const status = async (ref: string) => (await request(app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', 'k').expect(200)).body;
  return { carrier, send, status };
}

describe('quiet hours in the recipient zone', () => {
  it("hold each recipient of one request until 08:00 in its own country's zone, the US one in the profile's timeZone", async () => {
    const { carrier, send, status } = setUp();
    const numbers = Object.values(RECIPIENTS).map(([number]) => number);
    const refs = await send('promo', numbers);
    const answers = await Promise.all(refs.map(status));
    const heldUntil = Object.fromEntries(Object.keys(RECIPIENTS).map((name, i) => [name, answers[i].send_at]));
    expect(answers.map((a) => a.status)).toEqual(numbers.map(() => 'scheduled'));
    expect(heldUntil).toEqual({
      kenya: RECIPIENTS.kenya[1],
      nigeria: RECIPIENTS.nigeria[1],
      germany: RECIPIENTS.germany[1],
      uk: RECIPIENTS.uk[1],
      india: RECIPIENTS.india[1],
      us: RECIPIENTS.us[1],
    });
    expect(carrier.accepted).toEqual([]);
  });

  it('send a US number at once when the profile has no timeZone, and still hold a Kenyan one of the same request', async () => {
    const { carrier, send, status } = setUp();
    const [us, kenya] = await send('promo-no-zone', [RECIPIENTS.us[0], RECIPIENTS.kenya[0]]);
    await eventually(() => carrier.accepted.length === 1);
    expect(carrier.accepted[0]!.ref).toBe(us);
    expect(await status(kenya!)).toMatchObject({ status: 'scheduled', send_at: RECIPIENTS.kenya[1] });
  });

  it('take a country of several zones that keep one clock as one zone, and refuse to guess for one whose clocks differ', () => {
    expect(countryZone('DE')).toBe('Europe/Berlin'); // Europe/Berlin and, for Büsingen, Europe/Zurich
    expect(countryZone('KE')).toBe('Africa/Nairobi');
    expect(countryZone('US')).toBeNull();
    expect(countryZone('ES')).toBeNull(); // the Canaries keep an hour less
    expect(countryZone('XK')).toBeNull(); // Kosovo: not in the zone table
  });
});

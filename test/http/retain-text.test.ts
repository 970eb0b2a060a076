/**
 * `retainText` through the real router, on memory, SQLite, PostgreSQL and MariaDB: `until-final`
 * redacts a message's text when its delivery receipt ends it (the status answer then says
 * `redacted: true` with the text's SHA-256, the delivery report still goes out, the parts and
 * `sms_count` stay); `days:N` redacts it at the retention sweep after N days; a profile's
 * policy goes over its principal's; a bad one is refused at construction.
 */
import { hash } from 'node:crypto';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { outcome, staticKeys, staticProfiles, type MessageRecord, type SmsRouterOptions, type Storage } from '../../src/index.js';
import { createGateway, type TestGateway } from '../helpers/gateway.js';
import { ScriptedDelivery } from '../helpers/scripted-delivery.js';
import { eventually } from '../helpers/poll.js';
import { freshStorages, routerTestServices } from '../helpers/fresh-storages.js';

const { admin, pgUnreachable: unreachable, maria, mariaUnreachable, gateways, cleanups } = await routerTestServices<TestGateway>();

const T0 = Date.UTC(2026, 10, 29, 12);
const DAY = 86_400_000;
const sha256 = (text: string): string => hash('sha256', text, 'hex');

const keys = staticKeys([
  { key: 'otp', id: 'otp-co', profiles: ['11111', '22222'], retainText: 'until-final' },
  { key: 'bank', id: 'bank-co', profiles: ['33333'], retainText: 'days:2' },
]);
// 22222 keeps its texts whatever its principal says: the profile's policy goes first.
const profiles = staticProfiles([
  { code: '11111', owners: ['otp-co'] },
  { code: '22222', owners: ['otp-co'], retainText: 'always' },
  { code: '33333', owners: ['bank-co'] },
]);

/** A gateway on `storage` with a clock read from `clock.now` and an hourly retention sweep every 20 ms. */
function start(storage: Storage, clock: { now: number }, delivery: ScriptedDelivery, options: Partial<SmsRouterOptions> = {}): TestGateway {
  const gateway = createGateway({
    verifyKey: keys,
    resolveProfile: profiles,
    storage,
    delivery,
    rateLimit: false,
    now: () => clock.now,
    retention: { intervalMs: 20, maxAgeMs: 30 * DAY, batchSize: 100 },
    ...options,
  });
  gateway.sms.on('error', () => undefined);
  gateways.push(gateway);
  return gateway;
}

function send(app: TestGateway['app'], key: string, profile: string, text: string) {
  return request(app)
    .post('/api/outbox/create')
    .set('X-API-Key', key)
    .send({ profile_code: profile, messages: [{ recipient: '254712345678', message: text }] });
}

async function status(app: TestGateway['app'], key: string, ref: string): Promise<Record<string, unknown>> {
  const res = await request(app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', key).expect(200);
  return res.body as Record<string, unknown>;
}

/** Sends `text` and has the carrier deliver it; resolves with its ref once it is delivered. */
async function sendDelivered(gateway: TestGateway, delivery: ScriptedDelivery, key: string, profile: string, text: string): Promise<string> {
  const ref = ((await send(gateway.app, key, profile, text).expect(200)).body as { message_ref: string }[])[0]!.message_ref;
  const delivered = new Promise<MessageRecord>((resolve) => gateway.sms.on('message.status', ({ message }) => message.ref === ref && message.state === 'delivered' && resolve(message)));
  const submitted = await eventually(() => delivery.submitted.find((part) => part.ref === ref));
  await delivery.receipt({ carrierId: submitted.carrierId, outcome: outcome('delivered', 'delivered_to_terminal') });
  await delivered;
  return ref;
}

const STORAGES = freshStorages('retain', { admin, pgUnreachable: unreachable, maria, mariaUnreachable, cleanups });

describe.each(STORAGES)('retainText on $name', ({ skip, make }) => {
  it.skipIf(skip)('until-final: the text is redacted when the delivery receipt ends the message; the status says redacted, with the SHA-256', async () => {
    const clock = { now: T0 };
    const delivery = new ScriptedDelivery();
    const storage = make();
    const gateway = start(storage, clock, delivery);
    const text = 'Your code is 482913';
    const ref = ((await send(gateway.app, 'otp', '11111', text).expect(200)).body as { message_ref: string }[])[0]!.message_ref;
    const submitted = await eventually(() => delivery.submitted.find((part) => part.ref === ref));
    const before = await status(gateway.app, 'otp', ref);
    expect(before.redacted).toBeUndefined();
    expect((await storage.getMessage('otp-co', ref))!.text).toBe(text);
    const statuses: MessageRecord[] = [];
    gateway.sms.on('message.status', ({ message }) => statuses.push(message));
    await delivery.receipt({ carrierId: submitted.carrierId, outcome: outcome('delivered', 'delivered_to_terminal') });
    await eventually(() => statuses.some((message) => message.state === 'delivered'));
    const after = await status(gateway.app, 'otp', ref);
    expect(after).toMatchObject({ status: 'delivered', redacted: true, text_sha256: sha256(text), sms_count: 1 });
    expect(after.parts).toEqual([expect.objectContaining({ index: 0, status: 'delivered' })]);
    const stored = (await storage.getMessage('otp-co', ref))!;
    expect(stored.text).toBe('[redacted]');
    expect(JSON.stringify(stored)).not.toContain('482913');
    expect(statuses.find((message) => message.state === 'delivered')!.text).toBe('[redacted]');
    // The profile's `always` goes over the principal's `until-final`.
    const keptRef = await sendDelivered(gateway, delivery, 'otp', '22222', 'Kept text');
    expect((await status(gateway.app, 'otp', keptRef)).redacted).toBeUndefined();
    expect((await storage.getMessage('otp-co', keptRef))!.text).toBe('Kept text');
  });

  it.skipIf(skip)('days:N: the text is kept after delivery, and redacted by the retention sweep once N days have passed', async () => {
    const clock = { now: T0 };
    const delivery = new ScriptedDelivery();
    const storage = make();
    const gateway = start(storage, clock, delivery);
    const text = 'Your statement is ready';
    const ref = await sendDelivered(gateway, delivery, 'bank', '33333', text);
    expect((await status(gateway.app, 'bank', ref)).redacted).toBeUndefined();
    expect((await storage.getMessage('bank-co', ref))!.text).toBe(text);
    // The storage contract suite checks that nothing is redacted a moment before.
    clock.now = T0 + 2 * DAY;
    await eventually(async () => (await status(gateway.app, 'bank', ref)).redacted === true, { what: 'the retention sweep to redact the text' });
    expect(await status(gateway.app, 'bank', ref)).toMatchObject({ status: 'delivered', redacted: true, text_sha256: sha256(text), sms_count: 1 });
  });
});

describe('retainText is checked', () => {
  it('at construction, in staticKeys and staticProfiles', () => {
    expect(() => staticKeys([{ key: 'k', id: 'p', retainText: 'days:0' as never }])).toThrow(/retainText must be 'always', 'until-final' or 'days:N'/);
    expect(() => staticProfiles([{ code: '1', owners: ['p'], retainText: 'forever' as never }])).toThrow(/retainText must be/);
    expect(() => staticKeys([{ key: 'k', id: 'p', retainText: 'days:30' }])).not.toThrow();
  });
});

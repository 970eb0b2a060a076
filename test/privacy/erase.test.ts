/**
 * `sms.erase({ recipient })` through the real router, on memory, SQLite, PostgreSQL and
 * MariaDB: every stored copy of one subscriber's number and texts goes (message records of
 * every principal, the report log, the idempotency answers, inbound messages), the erased
 * records keep the SHA-256 of what they had, a message not yet sent is cancelled (with its
 * report), the list by recipient no longer finds them, other subscribers are untouched, the
 * opt-out list keeps the number, and the erase is announced with the counts.
 */
import { hash } from 'node:crypto';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { outcome, staticKeys, staticProfiles, type MessageRecord, type Storage, type SubscriberErasedEvent } from '../../src/index.js';
import { createGateway, type TestGateway } from '../helpers/gateway.js';
import { ScriptedDelivery } from '../helpers/scripted-delivery.js';
import { eventually } from '../helpers/poll.js';
import { freshStorages, routerTestServices } from '../helpers/fresh-storages.js';

const { admin, pgUnreachable: unreachable, maria, mariaUnreachable, gateways, cleanups } = await routerTestServices<TestGateway>();

const NUMBER = '254712345678';
const OTHER_NUMBER = '254722000111';
const sha256 = (text: string): string => hash('sha256', text, 'hex');
const LATER = new Date(Date.now() + 7 * 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z');

const keys = staticKeys([
  { key: 'acme-key', id: 'acme', profiles: ['12345'] },
  { key: 'bank-key', id: 'bank', profiles: ['33333'] },
]);
const profiles = staticProfiles([
  { code: '12345', owners: ['acme'] },
  { code: '33333', owners: ['bank'], defaultCountry: 'KE' },
]);

function start(storage: Storage, delivery: ScriptedDelivery): TestGateway {
  const gateway = createGateway({ verifyKey: keys, resolveProfile: profiles, storage, delivery, rateLimit: false });
  gateway.sms.on('error', () => undefined);
  gateways.push(gateway);
  return gateway;
}

/** Sends one message; resolves with its ref. */
async function send(app: TestGateway['app'], key: string, profile: string, recipient: string, text: string, extra: Record<string, unknown> = {}, idempotencyKey?: string): Promise<string> {
  const req = request(app).post('/api/outbox/create').set('X-API-Key', key);
  if (idempotencyKey !== undefined) req.set('Idempotency-Key', idempotencyKey);
  const res = await req.send({ profile_code: profile, ...extra, messages: [{ recipient, message: text }] });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body as { message_ref: string }[])[0]!.message_ref;
}

/** Sends `text` and has the carrier deliver it; resolves with its ref once it is delivered. */
async function sendDelivered(gateway: TestGateway, delivery: ScriptedDelivery, key: string, profile: string, recipient: string, text: string, idempotencyKey?: string): Promise<string> {
  const ref = await send(gateway.app, key, profile, recipient, text, {}, idempotencyKey);
  const delivered = new Promise<void>((resolve) => gateway.sms.on('message.status', ({ message }) => message.ref === ref && message.state === 'delivered' && resolve()));
  const submitted = await eventually(() => delivery.submitted.find((part) => part.ref === ref));
  await delivery.receipt({ carrierId: submitted.carrierId, outcome: outcome('delivered', 'delivered_to_terminal') });
  await delivered;
  return ref;
}

const STORAGES = freshStorages('erase', { admin, pgUnreachable: unreachable, maria, mariaUnreachable, cleanups });

describe.each(STORAGES)('sms.erase on $name', ({ skip, make }) => {
  it.skipIf(skip)('erases the number and texts of one subscriber in every stored copy, and no one else\'s', async () => {
    const delivery = new ScriptedDelivery();
    const storage = make();
    const gateway = start(storage, delivery);
    const { app, sms } = gateway;
    // Two principals, the number written two ways; a delivered message keyed for idempotency, a scheduled one, another subscriber's.
    const delivered = await sendDelivered(gateway, delivery, 'acme-key', '12345', NUMBER, 'Your code is 482913', 'order-1');
    const idempotentAnswer = (await request(app).post('/api/outbox/create').set('X-API-Key', 'acme-key').set('Idempotency-Key', 'order-1')
      .send({ profile_code: '12345', messages: [{ recipient: NUMBER, message: 'Your code is 482913' }] }).expect(200)).text;
    expect(idempotentAnswer).toContain(NUMBER);
    const scheduled = await send(app, 'acme-key', '12345', NUMBER, 'See you tomorrow', { send_at: LATER });
    const bankRef = await sendDelivered(gateway, delivery, 'bank-key', '33333', '0712 345 678', 'Balance 1,204.00');
    const otherRef = await sendDelivered(gateway, delivery, 'acme-key', '12345', OTHER_NUMBER, 'Not erased');
    await storage.insertInbound!({
      ref: 'mo-1', principalId: 'acme', profileCode: '12345', from: NUMBER, to: '12345', text: 'STOP sending me codes',
      receivedAt: Date.now(), callbackUrl: null, callbackSecret: null, uid: null,
    });
    await sms.optOuts.add('12345', NUMBER);

    const statuses: MessageRecord[] = [];
    sms.on('message.status', ({ message }) => statuses.push(message));
    const announced: SubscriberErasedEvent[] = [];
    sms.on('subscriber.erased', (event) => announced.push(event));
    const summary = await sms.erase({ recipient: '+254 712-345-678' });

    expect(summary).toMatchObject({ recipientSha256: sha256(NUMBER), messages: 3, cancelled: 1, idempotency: 1, inbound: 1, notErased: [] });
    expect(announced).toEqual([summary]);
    expect(JSON.stringify(announced)).not.toContain(NUMBER);
    // The message not yet sent was ended, announced and refunded as a cancel would.
    expect(statuses).toEqual([expect.objectContaining({ ref: scheduled, state: 'cancelled', recipient: '[erased]', text: '[redacted]' })]);

    for (const [principal, ref, text] of [['acme', delivered, 'Your code is 482913'], ['acme', scheduled, 'See you tomorrow'], ['bank', bankRef, 'Balance 1,204.00']] as const) {
      const record = (await storage.getMessage(principal, ref))!;
      expect(record).toMatchObject({ recipient: '[erased]', recipientSha256: sha256(NUMBER), text: '[redacted]', textSha256: sha256(text) });
      expect(record.recipientAsSent ?? null).toBeNull();
      expect(JSON.stringify(record)).not.toMatch(/712345678|712 345 678|482913|1,204/);
    }
    expect((await storage.getMessage('acme', delivered))!.state).toBe('delivered');
    expect(await storage.getMessage('acme', otherRef)).toMatchObject({ recipient: OTHER_NUMBER, text: 'Not erased' });

    // The status answer, the list by recipient, the report log and a retry of the keyed request keep no number.
    const status = await request(app).get(`/api/outbox/delivery-status/${delivered}`).set('X-API-Key', 'acme-key').expect(200);
    expect(status.text).not.toContain('712345678');
    const listed = await request(app).get(`/api/outbox/messages?recipient=${NUMBER}`).set('X-API-Key', 'acme-key').expect(200);
    expect(listed.body.messages).toEqual([]);
    if (storage.readReports !== undefined) {
      const reports = [...(await storage.readReports('acme', null, 100)), ...(await storage.readReports('bank', null, 100))];
      expect(reports.length).toBeGreaterThanOrEqual(3);
      expect(JSON.stringify(reports)).not.toMatch(/712345678|482913|1,204/);
      expect(JSON.stringify(reports)).toContain(OTHER_NUMBER);
    }
    const retried = await request(app).post('/api/outbox/create').set('X-API-Key', 'acme-key').set('Idempotency-Key', 'order-1')
      .send({ profile_code: '12345', messages: [{ recipient: NUMBER, message: 'Your code is 482913' }] }).expect(200);
    expect(retried.text).not.toContain(NUMBER);
    expect(retried.body).toEqual([expect.objectContaining({ recipient: '[erased]', message_ref: delivered })]);
    const [inbound] = await storage.listInbound!({ limit: 10 });
    expect(inbound).toMatchObject({ ref: 'mo-1', from: '[erased]', text: '[redacted]' });
    // The stop request is still honoured: the opt-out list keeps the number.
    expect(await sms.optOuts.has('12345', NUMBER)).toBe(true);

    // A second erase finds nothing left.
    expect(await sms.erase({ recipient: NUMBER })).toMatchObject({ messages: 0, cancelled: 0, idempotency: 0, inbound: 0 });
  });
});

describe('sms.erase is checked', () => {
  it('refuses a call without a number', async () => {
    const gateway = start(new (await import('../../src/index.js')).MemoryStorage(), new ScriptedDelivery());
    await expect(gateway.sms.erase({ recipient: '' })).rejects.toThrow(/recipient/);
    await expect(gateway.sms.erase({} as never)).rejects.toThrow(/recipient/);
    await expect(gateway.sms.erase({ recipient: '0712345678', defaultCountry: 'kenya' })).rejects.toThrow(/defaultCountry/);
  });

  it('names the kinds a storage without the erase methods keeps, and erases nothing', async () => {
    const storage = new (await import('../../src/index.js')).MemoryStorage() as Storage;
    for (const name of ['eraseMessages', 'eraseIdempotency', 'eraseInbound'] as const) delete storage[name];
    const gateway = start(storage, new ScriptedDelivery());
    const ref = await send(gateway.app, 'acme-key', '12345', NUMBER, 'Hello', { send_at: LATER });
    expect(await gateway.sms.erase({ recipient: NUMBER })).toMatchObject({ messages: 0, notErased: ['messages', 'idempotency', 'inbound'] });
    expect((await storage.getMessage('acme', ref))!.recipient).toBe(NUMBER);
  });

  it('reads a national number in the given country, as a profile\'s defaultCountry does', async () => {
    const gateway = start(new (await import('../../src/index.js')).MemoryStorage(), new ScriptedDelivery());
    const ref = await send(gateway.app, 'acme-key', '12345', NUMBER, 'Hello', { send_at: LATER });
    expect(await gateway.sms.erase({ recipient: '0712345678', defaultCountry: 'KE' })).toMatchObject({ messages: 1, cancelled: 1, recipientSha256: sha256(NUMBER) });
    expect((await gateway.sms.storage.getMessage('acme', ref))!.recipient).toBe('[erased]');
  });
});

/**
 * The send preview (`POST {base}/create/preview`, `{base}/premium/preview`) through the public
 * API over HTTP: what it answers for a long Unicode text, an opted-out recipient, a scheduled
 * message and bad items (the send's own codes and details), and that it stores, sends and
 * charges nothing, nor takes from the message budget.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { RoutedDelivery, staticProfiles, type SmsRouterOptions } from '../../src/index.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';
import { ScriptedDelivery } from '../helpers/scripted-delivery.js';

const open: TestGateway[] = [];
afterEach(async () => {
  for (const { sms } of open.splice(0)) await sms.close();
});

function start(options: Partial<SmsRouterOptions> = {}): TestGateway & { delivery: ScriptedDelivery } {
  const delivery = new ScriptedDelivery();
  const gateway = createGateway({ delivery, ...options });
  open.push(gateway);
  return { ...gateway, delivery };
}

const preview = (gateway: TestGateway, body: object, endpoint = 'create') =>
  request(gateway.app).post(`/api/outbox/${endpoint}/preview`).set('X-API-Key', KEY).send(body);
const send = (gateway: TestGateway, body: object, endpoint = 'create') => request(gateway.app).post(`/api/outbox/${endpoint}`).set('X-API-Key', KEY).send(body);

describe('the send preview', () => {
  it('answers a long Unicode text\u2019s encoding and units as the send counts them, and what smart encoding would make of it', async () => {
    const gateway = start({ credit: { ledger: 'storage' } });
    await gateway.sms.credit!.topUp('acme', 100);
    const emoji = 'Habari \u{1F44B}\u{1F3FD} rafiki, karibu sana! '.repeat(5);
    const curly = '\u201CGood news\u201D \u2014 your order is on its way. '.repeat(4);
    const body = { profile_code: '12345', messages: [{ recipient: '254712345678', message: emoji, external_id: 'u-1' }, { recipient: '254712345679', message: curly }] };
    const res = await preview(gateway, body);
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(2);
    const [first, second] = res.body as Record<string, unknown>[];
    expect(first).toMatchObject({ index: 0, recipient: '254712345678', external_id: 'u-1', encoding: 'UCS-2', sms_count: 3, smart_encoding: null, units: 3, sender: '12345', error: null });
    // Only UCS-2 for its quotes and dash: GSM-7 once smart encoding replaces them, which this profile does not ask.
    expect(second).toMatchObject({ index: 1, external_id: null, encoding: 'UCS-2', sms_count: 3, smart_encoding: { applied: false, encoding: 'GSM-7', sms_count: 1 }, units: 3 });
    const sent = await send(gateway, body);
    expect(sent.status).toBe(200);
    expect((sent.body as { sms_count: number }[]).map((item) => item.sms_count)).toEqual([first!.sms_count, second!.sms_count]);
  });

  it('shows smart encoding applied when the profile has it on', async () => {
    const gateway = start({ resolveProfile: staticProfiles([{ code: '12345', owners: ['acme'], smartEncoding: true }]) });
    const res = await preview(gateway, { profile_code: '12345', messages: [{ recipient: '254712345678', message: '\u201CHi\u201D \u2014 ok' }] });
    expect(res.body[0]).toMatchObject({ encoding: 'GSM-7', sms_count: 1, smart_encoding: { applied: true, encoding: 'GSM-7', sms_count: 1 }, units: null });
  });

  it('says which recipient opted out of the sender: the premium send would end it rejected', async () => {
    const gateway = start();
    await gateway.sms.optOuts.add('22021501', '254712345678');
    const res = await preview(gateway, { profile_code: '22021501', messages: [{ mobile_number: '254712345678', message: 'Hi' }, { mobile_number: '254712345679', message: 'Hi' }] }, 'premium');
    expect(res.status).toBe(200);
    expect((res.body as Record<string, unknown>[]).map((item) => [item.mobile_number, item.opted_out])).toEqual([
      ['254712345678', true],
      ['254712345679', false],
    ]);
  });

  it('gives a scheduled message its send_at and a validity period its valid_until', async () => {
    const gateway = start();
    const sendAt = Math.floor(Date.now() / 1000) + 3600;
    const res = await preview(gateway, { profile_code: '12345', send_at: sendAt, validity_period: 600, messages: [{ recipient: '254712345678', message: 'Later' }] });
    expect(res.body[0]).toMatchObject({ send_at: new Date(sendAt * 1000).toISOString(), valid_until: new Date((sendAt + 600) * 1000).toISOString(), hold_reason: null });
    const now = await preview(gateway, { profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Now' }] });
    expect(now.body[0]).toMatchObject({ send_at: null, valid_until: null, opted_out: false });
  });

  it('answers each bad item with the code and details the send answers for it, and the good ones as usual', async () => {
    const gateway = start();
    const good = { recipient: '254712345678', message: 'Fine' };
    const badNumber = { recipient: '+254712345679', message: 'Fine' };
    const landline = { recipient: '254202222222', message: 'Fine' };
    const emptyText = { recipient: '254712345678', message: '' };
    const res = await preview(gateway, { profile_code: '12345', messages: [good, badNumber, landline, emptyText] });
    expect(res.status).toBe(200);
    const items = res.body as { index: number; error: { code: string; details: string } | null }[];
    expect(items.map((item) => item.index)).toEqual([0, 1, 2, 3]);
    expect(items[0]!.error).toBeNull();
    // What the send answers for a body whose only bad item is that one, at the same place.
    for (const [index, bad] of [[1, badNumber], [2, landline], [3, emptyText]] as const) {
      const messages = [good, good, good, good];
      messages[index] = bad;
      const sent = await send(gateway, { profile_code: '12345', messages });
      expect(sent.status).toBe(422);
      expect(items[index]!.error).toEqual(sent.body);
    }
    expect(new Set(items.slice(1).map((item) => item.error!.code))).toEqual(new Set(['VALIDATION_FAILED', 'NOT_MOBILE']));
  });

  it('answers a bad number of the premium list form as the send does, the good ones as usual', async () => {
    const gateway = start();
    const body = { profile_code: '22021501', to: ['254712345678', '0712345679'], message: 'Hi both', message_id: 'm-1' };
    const res = await preview(gateway, body, 'premium');
    const sent = await send(gateway, body, 'premium');
    expect(sent.status).toBe(422);
    expect(res.body).toEqual([
      expect.objectContaining({ index: 0, to: '254712345678', message_id: 'm-1', error: null }),
      { index: 1, error: sent.body },
    ]);
  });

  it('answers an error of the whole request as the send does', async () => {
    const gateway = start();
    const body = { profile_code: '99999', messages: [{ recipient: '254712345678', message: 'Hi' }] };
    const previewed = await preview(gateway, body);
    const sent = await send(gateway, body);
    expect(previewed.status).toBe(422);
    expect(previewed.body).toEqual(sent.body);
    expect(previewed.body).toEqual({ details: 'Invalid Profile Code', code: 'INVALID_PROFILE' });
    const noKey = await request(gateway.app).post('/api/outbox/create/preview').send(body);
    expect(noKey.status).toBe(401);
  });

  it('names the route a message would take when the carrier has routes', async () => {
    const delivery = new RoutedDelivery({ routes: { kenya: { delivery: new ScriptedDelivery(), prefixes: ['254'] }, world: { delivery: new ScriptedDelivery() } }, default: 'world' });
    const gateway = createGateway({ delivery });
    open.push(gateway);
    const res = await preview(gateway, { profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Hi' }, { recipient: '255712345678', message: 'Hi' }] });
    expect((res.body as { route: string }[]).map((item) => item.route)).toEqual(['kenya', 'world']);
  });

  it('stores, sends and charges nothing, and takes nothing from the message budget', async () => {
    const gateway = start({ credit: { ledger: 'storage' }, rateLimit: { messages: { limit: 3 } } });
    await gateway.sms.credit!.topUp('acme', 10);
    const accepted: unknown[] = [];
    const charged: unknown[] = [];
    gateway.sms.on('message.accepted', (event) => accepted.push(event));
    gateway.sms.on('credit.charged', (event) => charged.push(event));
    const body = { profile_code: '12345', messages: [1, 2, 3].map((i) => ({ recipient: `25471234567${i}`, message: 'Preview me', external_id: 'preview-only' })) };
    // Three previews of three messages: nine, three times the budget.
    for (let i = 0; i < 3; i++) expect((await preview(gateway, body)).status).toBe(200);
    const found = await request(gateway.app).get('/api/outbox/delivery-status?external_id=preview-only').set('X-API-Key', KEY);
    expect(found.body).toEqual([]);
    expect(accepted).toEqual([]);
    expect(charged).toEqual([]);
    expect(await gateway.sms.credit!.balance('acme')).toBe(10);
    expect(gateway.delivery.submitted).toEqual([]);
    // The budget is whole: the send of the same three messages is accepted, and charged.
    const sent = await send(gateway, body);
    expect(sent.status).toBe(200);
    expect(await gateway.sms.credit!.balance('acme')).toBe(7);
  });
});

import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';

let gateway: TestGateway;
afterEach(async () => {
  await gateway?.sms.close();
});

const GSM_161 = 'a'.repeat(161);
/** 71 UTF-16 units with one emoji: UCS-2, two parts. */
const EMOJI_71 = '\u{1F600}' + 'b'.repeat(69);

async function statusOf(app: TestGateway['app'], ref: string) {
  const res = await request(app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', KEY);
  expect(res.status).toBe(200);
  return res.body as { status: string; status_reason: string | null; sms_count: number };
}

/** The message's status once it has ended. */
function terminalStatus(app: TestGateway['app'], ref: string) {
  return eventually(() => statusOf(app, ref), { until: (s) => !['queued', 'submitted'].includes(s.status), what: `${ref} to end` });
}

describe('POST /api/outbox/create (quick send)', () => {
  it('answers one item per message, in order, with sms_count, and each message reaches delivered', async () => {
    gateway = createGateway();
    const res = await request(gateway.app)
      .post('/api/outbox/create')
      .set('x-api-key', KEY)
      .send({
        profile_code: '12345',
        messages: [
          { recipient: '254712345678', message: 'Hello', message_type: 1, req_type: 1, external_id: 'a-1' },
          { recipient: '254712345679', message: GSM_161, external_id: 'a-2' },
          { recipient: '254712345670', message: EMOJI_71, external_id: 'a-3' },
        ],
      });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers.etag).toBeUndefined();
    expect(res.body).toHaveLength(3);
    expect(res.body.map((item: Record<string, unknown>) => Object.keys(item))).toEqual([
      ['external_id', 'recipient', 'sms_count', 'message_ref'],
      ['external_id', 'recipient', 'sms_count', 'message_ref'],
      ['external_id', 'recipient', 'sms_count', 'message_ref'],
    ]);
    expect(res.body.map((item: { external_id: string }) => item.external_id)).toEqual(['a-1', 'a-2', 'a-3']);
    expect(res.body.map((item: { recipient: string }) => item.recipient)).toEqual([
      '254712345678',
      '254712345679',
      '254712345670',
    ]);
    expect(res.body.map((item: { sms_count: number }) => item.sms_count)).toEqual([1, 2, 2]);
    const refs = res.body.map((item: { message_ref: string }) => item.message_ref);
    expect(new Set(refs).size).toBe(3);
    for (const ref of refs) {
      const status = await terminalStatus(gateway.app, ref);
      expect(status.status).toBe('delivered');
      expect(status.status_reason).toBe('delivered_to_terminal');
    }
  });

  it('echoes an integer external_id as a string and generates one when missing', async () => {
    gateway = createGateway();
    const res = await request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: 12345, messages: [{ recipient: '254712345678', message: 'Hi', external_id: 42 }, { recipient: '254712345678', message: 'Hi' }] });
    expect(res.status).toBe(200);
    expect(res.body[0].external_id).toBe('42');
    expect(res.body[1].external_id).toBe(res.body[1].message_ref);
  });

  it('gives the same external_id on two requests two messages, two refs, both sent', async () => {
    gateway = createGateway();
    const body = { profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Same', external_id: 'dup' }] };
    const first = await request(gateway.app).post('/api/outbox/create').set('X-API-Key', KEY).send(body);
    const second = await request(gateway.app).post('/api/outbox/create').set('X-API-Key', KEY).send(body);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(first.body[0].message_ref).not.toBe(second.body[0].message_ref);
    for (const res of [first, second]) expect((await terminalStatus(gateway.app, res.body[0].message_ref)).status).toBe('delivered');
    const both = await request(gateway.app).get('/api/outbox/delivery-status').query({ external_id: 'dup' }).set('X-API-Key', KEY);
    expect(both.status).toBe(200);
    expect(both.body).toHaveLength(2);
  });

  it('keeps a __proto__ key in the body away from any prototype', async () => {
    gateway = createGateway();
    const res = await request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .set('Content-Type', 'application/json')
      .send('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"profile_code":"12345","messages":[{"recipient":"254712345678","message":"x","__proto__":{"polluted":true}}]}');
    expect(res.status).toBe(200);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});

describe('POST /api/outbox/premium', () => {
  it('takes the messages form and answers with mobile_number', async () => {
    gateway = createGateway();
    const res = await request(gateway.app)
      .post('/api/outbox/premium')
      .set('X-API-Key', KEY)
      .send({
        profile_code: '22021501',
        messages: ['254711000001', '254711000002', '254711000003'].map((n, i) => ({
          mobile_number: n,
          message: 'Premium',
          message_type: 1,
          req_type: 1,
          external_id: `p-${i}`,
        })),
      });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([0, 1, 2].map((i) => ({
      external_id: `p-${i}`,
      mobile_number: `25471100000${i + 1}`,
      sms_count: 1,
      message_ref: expect.any(String),
    })));
    for (const item of res.body) expect((await terminalStatus(gateway.app, item.message_ref)).status).toBe('delivered');
  });

  it('takes the published parameter-list form (to, from, message_id) and answers in its names', async () => {
    gateway = createGateway();
    const res = await request(gateway.app)
      .post('/api/outbox/premium')
      .set('X-API-Key', KEY)
      .send({ profile_code: '22021501', to: ['254711000001', '254711000002', '254711000003'], message: GSM_161, from: '22021501', message_id: 'm-9' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(['254711000001', '254711000002', '254711000003'].map((to) => ({
      message_id: 'm-9',
      to,
      sms_count: 2,
      message_ref: expect.any(String),
    })));
    for (const item of res.body) {
      const status = await terminalStatus(gateway.app, item.message_ref);
      expect(status).toMatchObject({ status: 'delivered', message_id: 'm-9', to: item.to, sms_count: 2 });
    }
  });

  it('accepts a single number as to', async () => {
    gateway = createGateway();
    const res = await request(gateway.app)
      .post('/api/outbox/premium')
      .set('X-API-Key', KEY)
      .send({ profile_code: '22021501', to: '254711000001', message: 'one' });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(1);
    expect(res.body[0].to).toBe('254711000001');
  });

  it('reads null in an optional field as absent, as typed clients serialize unset fields', async () => {
    gateway = createGateway();
    const accepted: { messageType: number; reqType: number; callbackUrl: string | null }[] = [];
    gateway.sms.on('message.accepted', ({ message }) => void accepted.push(message));
    const quick = await request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({
        profile_code: '12345',
        dlr_callback_url: null,
        messages: [{ recipient: '254711000001', message: 'one', message_type: null, req_type: null, external_id: null }],
      });
    expect(quick.status).toBe(200);
    // A missing external_id is the message_ref, as when the field is left out.
    expect(quick.body[0].external_id).toBe(quick.body[0].message_ref);
    expect(accepted[0]).toMatchObject({ messageType: 1, reqType: 1, callbackUrl: null });
    expect(await terminalStatus(gateway.app, quick.body[0].message_ref)).toMatchObject({ status: 'delivered', callback: null });

    const list = await request(gateway.app)
      .post('/api/outbox/premium')
      .set('X-API-Key', KEY)
      .send({ profile_code: '22021501', to: ['254711000002'], message: 'two', from: null, message_id: null, dlr_callback_url: null });
    expect(list.status).toBe(200);
    expect(list.body[0].message_id).toBe(list.body[0].message_ref);

    // One client class for both premium forms sends the unused one's fields as null.
    for (const body of [
      { profile_code: '22021501', messages: [{ mobile_number: '254711000003', message: 'three' }], to: null, message: null },
      { profile_code: '22021501', messages: null, to: ['254711000004'], message: 'four' },
    ]) {
      const res = await request(gateway.app).post('/api/outbox/premium').set('X-API-Key', KEY).send(body);
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(1);
    }
  });

  it('still refuses null in a required field, naming what it must be', async () => {
    gateway = createGateway();
    const res = await request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', messages: [{ recipient: '254711000001', message: null }] });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ details: 'messages[0].message: must be a string', code: 'VALIDATION_FAILED' });
    const wrongType = await request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', dlr_callback_url: 5, messages: [{ recipient: '254711000001', message: 'x' }] });
    expect(wrongType.body).toEqual({ details: 'dlr_callback_url: must be a string', code: 'VALIDATION_FAILED' });
  });

  it('refuses a body with both forms, storing nothing', async () => {
    const stored: string[] = [];
    gateway = createGateway();
    gateway.sms.on('message.accepted', ({ message }) => void stored.push(message.ref));
    const res = await request(gateway.app)
      .post('/api/outbox/premium')
      .set('X-API-Key', KEY)
      .send({
        profile_code: '22021501',
        messages: [{ mobile_number: '254711000001', message: 'one' }],
        to: ['254711000002'],
        message: 'two',
      });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ details: 'to: must not be sent with messages: use one form', code: 'VALIDATION_FAILED' });
    expect(stored).toEqual([]);
  });

  it('refuses a from that is not a sender of the profile', async () => {
    gateway = createGateway();
    const res = await request(gateway.app)
      .post('/api/outbox/premium')
      .set('X-API-Key', KEY)
      .send({ profile_code: '22021501', to: ['254711000001'], message: 'x', from: '99999' });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ details: 'from: is not a sender of this profile', code: 'VALIDATION_FAILED' });
  });
});

describe('mounting', () => {
  it('works under a prefix and lets other paths fall through to the host', async () => {
    gateway = createGateway({}, '/sms');
    const sent = await request(gateway.app)
      .post('/sms/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'prefixed' }] });
    expect(sent.status).toBe(200);
    const status = await request(gateway.app).get(`/sms/api/outbox/delivery-status/${sent.body[0].message_ref}`).set('X-API-Key', KEY);
    expect(status.status).toBe(200);
    for (const path of ['/sms/other', '/api/outbox/create', '/sms/api/outbox/unknown']) {
      const res = await request(gateway.app).post(path).set('X-API-Key', KEY).send({});
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ host: 'fell through' });
    }
    // A path of the router's own, asked with a method it does not serve, is the router's 405.
    const wrongMethod = await request(gateway.app).get('/sms/api/outbox/create').set('X-API-Key', KEY);
    expect([wrongMethod.status, wrongMethod.headers.allow, wrongMethod.body.code]).toEqual([405, 'POST, OPTIONS', 'METHOD_NOT_ALLOWED']);
  });
});

/**
 * What real PHP clients of the original service send: `""` for "no
 * delivery report" and "no sender", and `""` as their own reference. Through the HTTP API.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';
import { cleanupAfterEach } from '../dlr/helpers.js';

const { receiver } = cleanupAfterEach();

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.sms.close();
  gateway = undefined;
});

interface Accepted {
  message_ref: string;
  external_id?: string;
  message_id?: string;
}

/** Waits until the message is terminal, and returns its status view. */
async function terminalStatus(app: TestGateway['app'], ref: string): Promise<Record<string, unknown>> {
  const statusOf = async () => {
    const res = await request(app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', KEY);
    expect(res.status).toBe(200);
    return res.body as Record<string, unknown>;
  };
  return eventually(statusOf, { until: (s) => !['queued', 'submitted'].includes(s.status as string), what: `${ref} to end` });
}

describe('empty strings from real clients', () => {
  it('reads "dlr_callback_url": "" as no report, on both endpoints and both premium forms', async () => {
    gateway = createGateway();
    const bodies: [string, Record<string, unknown>][] = [
      ['create', { profile_code: '12345', dlr_callback_url: '', messages: [{ recipient: '254712345678', message: 'Hi', external_id: 'php-1' }] }],
      ['premium', { profile_code: '22021501', dlr_callback_url: '', messages: [{ mobile_number: '254712345678', message: 'Hi', external_id: 'php-2' }] }],
      ['premium', { profile_code: '22021501', dlr_callback_url: '', to: ['254712345678'], message: 'Hi', message_id: 'php-3' }],
    ];
    for (const [path, body] of bodies) {
      const res = await request(gateway.app).post(`/api/outbox/${path}`).set('X-API-Key', KEY).send(body);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const status = await terminalStatus(gateway.app, (res.body as Accepted[])[0]!.message_ref);
      // No report is pending or sent: the message has no callback at all.
      expect(status.callback).toBeNull();
    }
  });

  it('reads "from": "" in the parameter-list form as no sender given (the profile default)', async () => {
    gateway = createGateway();
    const senders: string[] = [];
    gateway.sms.on('message.accepted', ({ message }) => void senders.push(message.sender));
    const res = await request(gateway.app)
      .post('/api/outbox/premium')
      .set('X-API-Key', KEY)
      .send({ profile_code: '22021501', to: ['254712345678'], message: 'Hi', from: '', message_id: 'm-1', dlr_callback_url: '' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // The same sender as when `from` is left out.
    const omitted = await request(gateway.app)
      .post('/api/outbox/premium')
      .set('X-API-Key', KEY)
      .send({ profile_code: '22021501', to: ['254712345678'], message: 'Hi' });
    expect(omitted.status).toBe(200);
    expect(senders).toHaveLength(2);
    expect(senders[0]).toBe(senders[1]);
  });

  it('echoes an empty external_id and message_id as "" (not a generated one), in the answer and the status', async () => {
    gateway = createGateway();
    const quick = await request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Hi', external_id: '' }, { recipient: '254712345679', message: 'Hi' }] });
    expect(quick.status).toBe(200);
    const [empty, missing] = quick.body as Accepted[];
    expect(empty!.external_id).toBe('');
    // Leaving the field out still gets a generated reference.
    expect(missing!.external_id).toBe(missing!.message_ref);
    expect((await terminalStatus(gateway.app, empty!.message_ref)).external_id).toBe('');

    const list = await request(gateway.app)
      .post('/api/outbox/premium')
      .set('X-API-Key', KEY)
      .send({ profile_code: '22021501', to: ['254712345678', '254712345679'], message: 'Hi', message_id: '' });
    expect(list.status).toBe(200);
    expect((list.body as Accepted[]).map((item) => item.message_id)).toEqual(['', '']);
    expect((await terminalStatus(gateway.app, (list.body as Accepted[])[0]!.message_ref)).message_id).toBe('');
  });

  it('sends "" as external_id (and message_id) in the delivery report of a message sent with an empty reference', async () => {
    const r = await receiver();
    gateway = createGateway({ dlr: { allowPrivateAddresses: ['127.0.0.0/8'] } });
    const quick = await request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', dlr_callback_url: `${r.origin}/quick`, messages: [{ recipient: '254712345678', message: 'Hi', external_id: '' }] });
    expect(quick.status).toBe(200);
    const list = await request(gateway.app)
      .post('/api/outbox/premium')
      .set('X-API-Key', KEY)
      .send({ profile_code: '22021501', dlr_callback_url: `${r.origin}/list`, to: ['254712345678'], message: 'Hi', from: '', message_id: '' });
    expect(list.status).toBe(200);

    await eventually(() => r.requests.length >= 2, { timeoutMs: 10_000, what: 'both delivery reports' });
    const reportTo = (url: string) => JSON.parse(r.requests.find((req) => req.url === url)!.body) as { data: Record<string, unknown> };
    const quickReport = reportTo('/quick');
    expect(quickReport.data.message_ref).toBe((quick.body as Accepted[])[0]!.message_ref);
    expect(quickReport.data.external_id).toBe('');
    expect(quickReport.data).not.toHaveProperty('message_id');
    const listReport = reportTo('/list');
    expect(listReport.data.message_ref).toBe((list.body as Accepted[])[0]!.message_ref);
    expect(listReport.data).toMatchObject({ external_id: '', message_id: '' });
  });
});

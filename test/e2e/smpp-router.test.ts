import { createServer, type Server } from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmppDelivery } from '../../src/smpp.js';
import type { InboundMessage } from '../../src/index.js';
import { startSmsc, type SmscEvent, type SmscHandle } from '../fixtures/smsc.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';

// The whole path through a real SMSC: HTTP accept -> submit_sm parts -> deliver_sm
// receipts -> one delivery report per message at a real HTTP receiver.

let smsc: SmscHandle;
let gateway: TestGateway;
let receiver: Server;
let receiverUrl: string;
const reports: { data: { message_ref: string; status: string; sms_count: number } }[] = [];

beforeAll(async () => {
  smsc = await startSmsc({ password: 'secret' });
  await smsc.send({ cmd: 'set', receiptMode: 'auto', receiptIdForm: 'decimal' });
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      reports.push(JSON.parse(body));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/dlr`;
  gateway = createGateway({
    delivery: new SmppDelivery({ url: `smpp://gateway:secret@127.0.0.1:${smsc.port}` }),
    dlr: { allowPrivateAddresses: ['127.0.0.0/8'] },
  });
  await gateway.sms.ready();
});

afterAll(async () => {
  await gateway?.sms.close();
  await smsc?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

const submits = () => smsc.events.filter((e): e is Extract<SmscEvent, { event: 'submit' }> => e.event === 'submit');

describe('the router with SmppDelivery against a real SMSC', () => {
  it('sends long GSM-7 and UCS-2 texts as concatenated parts, and each message gets one delivery report', async () => {
    const gsm = 'G'.repeat(400);
    const emoji = '\u{1F600}'.repeat(70); // 140 UTF-16 units
    const res = await request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({
        profile_code: '12345',
        messages: [
          { recipient: '254712345678', message: gsm, external_id: 'gsm' },
          { recipient: '254712345679', message: emoji, external_id: 'ucs2' },
        ],
        dlr_callback_url: receiverUrl,
      });
    expect(res.status).toBe(200);
    expect(res.body.map((m: { sms_count: number }) => m.sms_count)).toEqual([3, 3]);
    const refs: string[] = res.body.map((m: { message_ref: string }) => m.message_ref);

    await eventually(() => reports.length >= 2, { timeoutMs: 15_000 });
    const byDestination = (d: string) => submits().filter((s) => s.destinationAddr === d);
    const gsmParts = byDestination('254712345678');
    const ucsParts = byDestination('254712345679');
    expect(gsmParts.map((s) => [s.dataCoding, s.udh?.slice(-4)])).toEqual([[0, '0301'], [0, '0302'], [0, '0303']]);
    expect(ucsParts.map((s) => [s.dataCoding, s.udh?.slice(-4)])).toEqual([[8, '0301'], [8, '0302'], [8, '0303']]);
    expect(gsmParts.map((s) => s.text).join('')).toBe(gsm);
    expect(ucsParts.map((s) => s.text).join('')).toBe(emoji);

    for (const ref of refs) {
      const status = await eventually(async () => {
        const s = (await request(gateway.app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', KEY)).body;
        return s.callback?.state === 'delivered' ? s : undefined;
      });
      expect(status).toMatchObject({ status: 'delivered', callback: { attempts: 1 } });
    }
    expect(reports.map((r) => r.data.message_ref).sort()).toEqual([...refs].sort());
    expect(reports.every((r) => r.data.status === 'delivered' && r.data.sms_count === 3)).toBe(true);
  });

  it('gives the carrier what is left of a validity period as submit_sm validity_period, in the relative form, and none without one', async () => {
    const res = await request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({
        profile_code: '12345',
        validity_period: 600,
        messages: [{ recipient: '254712340600', message: 'Your code is 1234', external_id: 'otp' }],
      });
    expect(res.status).toBe(200);
    await request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', messages: [{ recipient: '254712340000', message: 'No hurry', external_id: 'plain' }] });
    const [otp] = await eventually(() => {
      const found = submits().filter((s) => s.destinationAddr === '254712340600');
      return found.length === 1 ? found : undefined;
    });
    // Read back as seconds from its arrival: 600 less the moments the message waited.
    expect(otp!.validitySeconds).toBeGreaterThan(590);
    expect(otp!.validitySeconds).toBeLessThanOrEqual(600);
    const plain = await eventually(() => submits().find((s) => s.destinationAddr === '254712340000'));
    expect(plain.validitySeconds).toBeNull();
  });

  it('turns a mobile-originated deliver_sm into a message.inbound event', async () => {
    const inbound: InboundMessage[] = [];
    gateway.sms.on('message.inbound', (m) => inbound.push(m));
    await smsc.send({ cmd: 'mo', from: '254700000001', to: '22021501', text: 'STOP' });
    const message = await eventually(() => inbound[0], { timeoutMs: 5_000 });
    expect(message).toMatchObject({ from: '254700000001', to: '22021501', text: 'STOP' });
  });
});

/**
 * examples/http-carrier: a delivery adapter over a carrier's HTTP API, run against a local
 * carrier (node:http on 127.0.0.1) that answers each submit with an id and POSTs signed
 * delivery reports to the route the adapter contributes (`DeliveryAdapter.routes`).
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startWithHttpCarrier } from '../../examples/http-carrier.js';
import { createSmsRouter, MemoryStorage, OptionError, staticKeys, type SmsRouterOptions } from '../../src/index.js';

const KEY = 'http-carrier-test-key';
const TOKEN = 'carrier-token';
const SECRET = 'carrier-signing-secret';

const stops: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** A submit the carrier received. */
interface Submitted {
  id: string;
  authorization: string | undefined;
  body: { from: string; to: string; text: string; part: { index: number; count: number; ref: number } };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The carrier: `POST /v1/messages` answers `{ id }` (or `refuse` when set), and `report()`
 * POSTs a delivery report to `receiptUrl`, signed with `SECRET` (or with `secret`).
 */
async function startCarrier() {
  const submitted: Submitted[] = [];
  const waiting: ((submit: Submitted) => void)[] = [];
  let refuse: { status: number; body: string } | null = null;
  const server = createServer((req, res) => {
    void readBody(req).then((text) => {
      if (req.method !== 'POST' || req.url !== '/v1/messages') {
        res.writeHead(404).end();
        return;
      }
      if (refuse !== null) {
        res.writeHead(refuse.status, { 'content-type': 'text/plain' }).end(refuse.body);
        return;
      }
      const submit: Submitted = { id: `C-${submitted.length + 1}`, authorization: req.headers.authorization, body: JSON.parse(text) as Submitted['body'] };
      submitted.push(submit);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: submit.id }));
      waiting.splice(0).forEach((wake) => wake(submit));
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  stops.push(() => new Promise((resolve) => server.close(resolve)));
  return {
    apiUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    submitted,
    /** The next submit (or the one already received when none is waited on). */
    nextSubmit: (): Promise<Submitted> => new Promise((resolve) => waiting.push(resolve)),
    refuseWith(status: number, body: string) {
      refuse = { status, body };
    },
    /** POSTs a report as the carrier does; resolves with the gateway's answer. */
    async report(receiptUrl: string, report: { id: string; status: string }, { secret = SECRET, at = Math.floor(Date.now() / 1000) } = {}) {
      const body = JSON.stringify(report);
      const signature = createHmac('sha256', secret).update(`${at}.${body}`).digest('hex');
      const res = await fetch(receiptUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-carrier-signature': `t=${at},v1=${signature}` },
        body,
      });
      return { status: res.status, body: (await res.json()) as unknown };
    },
  };
}

async function startGateway(carrier: { apiUrl: string }, router: Partial<SmsRouterOptions> = {}) {
  const gateway = await startWithHttpCarrier({ apiKey: KEY, carrier: { apiUrl: carrier.apiUrl, token: TOKEN, secret: SECRET }, router });
  stops.push(gateway.stop);
  const send = async (message: string) => {
    const res = await fetch(`${gateway.url}/api/outbox/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ profile_code: '12345', messages: [{ recipient: '254712345678', message }] }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { message_ref: string }[])[0]!.message_ref;
  };
  const status = async (ref: string) => {
    const res = await fetch(`${gateway.url}/api/outbox/delivery-status/${ref}`, { headers: { 'x-api-key': KEY } });
    return ((await res.json()) as { status: string; status_reason?: string }).status;
  };
  const submittedRef = (ref: string) =>
    new Promise<void>((resolve) => {
      const heard = ({ message }: { message: { ref: string } }) => {
        if (message.ref !== ref) return;
        gateway.sms.off('message.submitted', heard);
        resolve();
      };
      gateway.sms.on('message.submitted', heard);
    });
  return { ...gateway, send, status, submittedRef, receiptUrl: `${gateway.url}/api/outbox/carrier/receipts` };
}

describe('examples/http-carrier', () => {
  it('submits each part to the carrier\u2019s API, and answers its signed report only once the report is stored', async () => {
    const carrier = await startCarrier();
    const gateway = await startGateway(carrier);
    const submit = carrier.nextSubmit();
    const ref = await gateway.send('Hello');
    const submittedRef = gateway.submittedRef(ref);
    expect(await submit).toMatchObject({
      authorization: `Bearer ${TOKEN}`,
      body: { from: '12345', to: '254712345678', text: 'Hello', part: { index: 1, count: 1 } },
    });
    await submittedRef;
    expect(await gateway.status(ref)).toBe('submitted');

    const answer = await carrier.report(gateway.receiptUrl, { id: 'C-1', status: 'delivered' });
    expect(answer.status).toBe(200);
    // The 200 came after the store: the status is already final when the carrier reads it.
    expect(await gateway.status(ref)).toBe('delivered');
  });

  it('refuses a report with a wrong or stale signature, and stores nothing from it', async () => {
    const carrier = await startCarrier();
    const gateway = await startGateway(carrier);
    const ref = await gateway.send('Hello');
    await gateway.submittedRef(ref);
    const forged = await carrier.report(gateway.receiptUrl, { id: 'C-1', status: 'delivered' }, { secret: 'not-the-secret' });
    expect(forged).toEqual({ status: 401, body: { error: 'bad signature' } });
    const stale = await carrier.report(gateway.receiptUrl, { id: 'C-1', status: 'delivered' }, { at: Math.floor(Date.now() / 1000) - 3600 });
    expect(stale).toEqual({ status: 401, body: { error: 'signature too old' } });
    expect(await gateway.status(ref)).toBe('submitted');
  });

  it('answers a report it could not store with 503, and stores the one the carrier sends again', async () => {
    // A storage whose first receipt fails, as a database that is briefly down.
    const storage = new MemoryStorage();
    const applyReceipt = storage.applyReceipt.bind(storage);
    let failures = 1;
    storage.applyReceipt = (...args) => (failures-- > 0 ? Promise.reject(new Error('database down')) : applyReceipt(...args));
    const carrier = await startCarrier();
    const gateway = await startGateway(carrier, { storage });
    gateway.sms.on('error', () => undefined);
    const ref = await gateway.send('Hello');
    await gateway.submittedRef(ref);
    const first = await carrier.report(gateway.receiptUrl, { id: 'C-1', status: 'delivered' });
    expect(first.status).toBe(503);
    expect(await gateway.status(ref)).toBe('submitted');
    expect((await carrier.report(gateway.receiptUrl, { id: 'C-1', status: 'delivered' })).status).toBe(200);
    expect(await gateway.status(ref)).toBe('delivered');
  });

  it('ends a message the carrier refuses (422) rejected, without a retry', async () => {
    const carrier = await startCarrier();
    carrier.refuseWith(422, 'invalid destination');
    const gateway = await startGateway(carrier);
    const ref = await gateway.send('Hello');
    const deadline = Date.now() + 5_000;
    while ((await gateway.status(ref)) !== 'rejected') {
      expect(Date.now(), 'the message did not end rejected').toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(carrier.submitted).toHaveLength(0);
  });

  it('mounts the carrier\u2019s route where the host says (carrierPath), outside the key check', async () => {
    const carrier = await startCarrier();
    const gateway = await startGateway(carrier, { carrierPath: '/hooks/carrier' });
    const ref = await gateway.send('Hello');
    await gateway.submittedRef(ref);
    expect((await carrier.report(`${gateway.url}/hooks/carrier/receipts`, { id: 'C-1', status: 'absent' })).status).toBe(200);
    expect(await gateway.status(ref)).toBe('undelivered');
    // Nothing at the default path then: it falls through to the host.
    expect((await fetch(gateway.receiptUrl, { method: 'POST' })).status).toBe(404);
  });

  it('refuses a carrierPath that is not "/"-separated literal segments, at construction', () => {
    const verifyKey = staticKeys([{ key: KEY, id: 'acme', profiles: ['12345'] }]);
    expect(() => createSmsRouter({ verifyKey, carrierPath: 'carrier' })).toThrow(OptionError);
    expect(() => createSmsRouter({ verifyKey, carrierPath: '/carrier/:id' })).toThrow(/`carrierPath` must be "\/"-separated segments/);
  });
});

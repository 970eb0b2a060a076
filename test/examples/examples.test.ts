/**
 * Runs every example in examples/, so none of them rots: each is started on a free port
 * on 127.0.0.1, used the way its header says, and stopped.
 */
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startBilling } from '../../examples/billing.js';
import { CallLogStorage, startWithCustomStorage, type StorageCall } from '../../examples/custom-storage.js';
import { startDlrReceiver } from '../../examples/dlr-receiver.js';
import { startHostWithKeyDatabase } from '../../examples/host-with-key-database.js';
import { startMountedUnderPrefix } from '../../examples/mount-under-prefix.js';
import { startTwoInstances } from '../../examples/two-instances.js';
import { createSmsRouter, MemoryStorage, SimulatorDelivery, staticKeys, type DlrPayload } from '../../src/index.js';
import { runStorageContract } from '../../src/testing.js';
import { eventually } from '../helpers/poll.js';
import { makePool, postgresConfig, postgresUnavailable, REDIS_URL, redisUnavailable } from '../helpers/services.js';

const KEY = 'example-test-key';
const stops: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function post(url: string, payload: unknown, key = KEY) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(payload),
  });
  const text = await res.text();
  // A send answers an array of items; an error `{ details, code }`; a path of the host's, its own page.
  const body = (res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text) as SendItem[] & { details?: string; code?: string };
  return { status: res.status, body };
}

type SendItem = { sms_count: number; message_ref: string };

const quick = (recipient = '254712345678', message = 'Hello') => ({ profile_code: '12345', messages: [{ recipient, message }] });

describe('examples/host-with-key-database', () => {
  it('authenticates keys by digest and resolves profiles from its own tables', async () => {
    const host = await startHostWithKeyDatabase();
    stops.push(host.stop);
    host.addProfile('12345', 'acme', 'ACME');
    host.addProfile('777', 'other', 'OTHER');
    const acme = host.issueKey('acme');
    const other = host.issueKey('other');

    const sent = await post(`${host.url}/api/outbox/create`, quick(), acme);
    expect(sent.status).toBe(200);
    expect(sent.body[0]!.sms_count).toBe(1);
    expect((await post(`${host.url}/api/outbox/create`, quick(), other)).body).toEqual({ details: 'Invalid Profile Code', code: 'INVALID_PROFILE' });
    expect((await post(`${host.url}/api/outbox/create`, quick(), 'not-a-key')).status).toBe(401);
    expect((await post(`${host.url}/api/outbox/premium`, quick(), acme)).status).toBe(403);
    host.disableCustomer('acme');
    expect((await post(`${host.url}/api/outbox/create`, quick(), acme)).status).toBe(403);
  });
});

describe('examples/custom-storage', () => {
  // The exported contract suite, run on the example adapter exactly as a host would.
  runStorageContract({ describe, it }, { name: 'CallLogStorage (example)', create: async () => new CallLogStorage(new MemoryStorage(), () => {}) });

  it('serves a gateway on the custom storage and sees every call', async () => {
    const calls: StorageCall[] = [];
    const running = await startWithCustomStorage({ apiKey: KEY, log: (call) => calls.push(call) });
    stops.push(running.stop);
    expect((await post(`${running.url}/api/outbox/create`, quick())).status).toBe(200);
    await eventually(() => calls.some((c) => c.method === 'applyReceipt'));
    expect(calls.map((c) => c.method)).toEqual(expect.arrayContaining(['ready', 'insertMessages', 'claimMessages', 'recordSubmission']));
    expect(calls.every((c) => !c.failed && c.ms >= 0)).toBe(true);
  });
});

describe('examples/billing', () => {
  it('charges sms_count on acceptance and refunds messages the carrier refused', async () => {
    const billing = await startBilling({
      apiKey: KEY,
      // Every part is refused at submit (a permanent error): the message ends `rejected`.
      delivery: new SimulatorDelivery({ seed: 1, latencyMs: 1, outcomes: { sender_name_blacklisted: 1 } }),
    });
    stops.push(billing.stop);
    const sent = await post(`${billing.url}/api/outbox/create`, quick('254712345678', 'x'.repeat(200)));
    expect(sent.body[0]!.sms_count).toBe(2);
    await eventually(() => billing.ledger.length === 2);
    expect(billing.ledger.map((e) => e.units)).toEqual([2, -2]);
    expect(billing.balance('acme')).toBe(0);
  });

  it('keeps the charge of a delivered message', async () => {
    const billing = await startBilling({ apiKey: KEY, delivery: new SimulatorDelivery({ seed: 1, latencyMs: 1 }) });
    stops.push(billing.stop);
    await post(`${billing.url}/api/outbox/create`, quick());
    await eventually(() => billing.balance('acme') === 1);
    expect(billing.ledger).toEqual([{ customerId: 'acme', messageRef: expect.any(String), units: 1 }]);
  });
});

describe('examples/dlr-receiver', () => {
  it('accepts the gateway\u2019s signed reports once each and refuses forged ones', async () => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const reports: DlrPayload[] = [];
    const receiver = await startDlrReceiver({ secret, onReport: (report) => reports.push(report) });
    stops.push(receiver.stop);
    const sms = createSmsRouter({
      verifyKey: staticKeys([{ key: KEY, id: 'acme', profiles: ['12345'] }]),
      delivery: new SimulatorDelivery({ seed: 1, latencyMs: 1 }),
      dlr: { secret, allowPrivateAddresses: ['127.0.0.1/32'], pollIntervalMs: 20 },
    });
    stops.push(() => sms.close());
    const { default: express } = await import('express');
    const server = express().use(sms).listen(0, '127.0.0.1');
    stops.push(() => new Promise((resolve) => server.close(resolve)));
    await new Promise((resolve) => server.once('listening', resolve));
    const gateway = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

    const sent = await post(`${gateway}/api/outbox/create`, { ...quick(), dlr_callback_url: `${receiver.url}/dlr` });
    await eventually(() => reports.length === 1);
    expect(reports[0]!.data).toMatchObject({ message_ref: sent.body[0]!.message_ref, status: 'delivered' });

    const body = JSON.stringify(reports[0]);
    const forged = await fetch(`${receiver.url}/dlr`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': reports[0]!.uid,
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': 'v1,' + Buffer.from('forged').toString('base64'),
      },
      body,
    });
    expect(forged.status).toBe(401);
    expect(reports).toHaveLength(1);
  });
});

describe('examples/mount-under-prefix', () => {
  it('serves the API under /sms/v1 and leaves every other path to the app', async () => {
    const running = await startMountedUnderPrefix({ apiKey: KEY });
    stops.push(running.stop);
    const sent = await post(`${running.url}/sms/v1/create`, quick());
    expect(sent.status).toBe(200);
    const doc = (await (await fetch(`${running.url}/sms/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toContain('/sms/v1/create');
    expect(await (await fetch(`${running.url}/sms/help`)).json()).toEqual({ docs: '/sms/v1/openapi.json' });
    expect(await (await fetch(`${running.url}/health`)).json()).toEqual({ ok: true });
    expect((await post(`${running.url}/api/outbox/create`, quick())).status).toBe(404);
    // The base path follows the app's `case sensitive routing`, off by default in Express.
    expect((await post(`${running.url}/sms/V1/create`, quick())).status).toBe(200);
  });
});

// The two-instances example needs the real PostgreSQL and Redis: each run gets a fresh
// schema and a fresh Redis prefix, both removed afterwards.
const admin = makePool(2);
afterAll(() => admin.end());
const servicesMissing = (await postgresUnavailable(admin)) ?? (await redisUnavailable());
if (servicesMissing !== null) console.warn(`examples/two-instances skipped: ${servicesMissing}`);

(servicesMissing === null ? describe : describe.skip)('examples/two-instances', () => {
  async function startPair(requestsPerMinute?: number) {
    const run = randomBytes(6).toString('hex');
    const schema = `example_two_${run}`;
    const redisPrefix = `sms-outbox-test:two-instances:${run}:`;
    stops.push(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      const redis = createClient({ url: REDIS_URL });
      await redis.connect();
      const keys = await redis.keys(`${redisPrefix}*`);
      if (keys.length > 0) await redis.del(keys);
      await redis.close();
    });
    const pair = await startTwoInstances({ postgres: postgresConfig(4), schema, redisUrl: REDIS_URL, redisPrefix, apiKey: KEY, requestsPerMinute });
    stops.push(pair.stop);
    return { ...pair, schema };
  }

  const status = async (url: string, ref: string) => {
    const res = await fetch(`${url}/api/outbox/delivery-status/${ref}`, { headers: { 'x-api-key': KEY } });
    return { status: res.status, body: (await res.json()) as { status?: string } };
  };

  it('reports through instance b a message sent through instance a, up to delivered', async () => {
    const { urls: [a, b] } = await startPair();
    const sent = await post(`${a}/api/outbox/create`, quick());
    expect(sent.status).toBe(200);
    const ref = sent.body[0]!.message_ref;

    const seen = await status(b, ref);
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ message_ref: ref, recipient: '254712345678', status: expect.stringMatching(/^(queued|submitted|delivered)$/) });
    const delivered = await eventually(async () => {
      const now = await status(b, ref);
      return now.body.status === 'delivered' ? now.body : undefined;
    });
    expect(delivered).toMatchObject({ status: 'delivered', status_reason: 'delivered_to_terminal' });
    expect((await status(a, ref)).body).toMatchObject({ status: 'delivered' });
  });

  it('counts the principal\u2019s request limit once across both instances', async () => {
    const limit = 4;
    const { urls: [a, b], schema } = await startPair(limit);
    // In turn, so the refusals fall on both instances: b has seen only two requests when it refuses.
    const statuses: number[] = [];
    for (let i = 0; i < limit + 2; i++) {
      statuses.push((await post(`${i % 2 === 0 ? a : b}/api/outbox/create`, quick())).status);
    }
    expect(statuses).toEqual([...Array<number>(limit).fill(200), 429, 429]);
    // A refused send stores nothing.
    const stored = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".ledger_messages`);
    expect(stored.rows[0]!.n).toBe(limit);
  });
});

import * as client from 'prom-client';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStorage, SimulatorDelivery, type PromClient, type SmsRouterOptions } from '../src/index.js';
import { GatedDelivery } from './helpers/gated-delivery.js';
import { createGateway, KEY, quickSend, type TestGateway } from './helpers/gateway.js';
import { eventually } from './helpers/poll.js';
import { SmsEventEmitter } from '../src/observe/events.js';
import { attachMetrics } from '../src/observe/metrics.js';
import type { MessageRecord } from '../src/storage/contract.js';
import { VERSION } from '../src/version.js';
import { startReceiver, type Receiver } from './dlr/helpers.js';

// Compile-time: the real prom-client module fits the structural type the option takes.
const typedClient: PromClient = client;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format that `registry.metrics()` answers. */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`unparsed metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The samples of `name` whose labels include `labels`. */
async function samples(registry: client.Registry, name: string, labels: Record<string, string> = {}): Promise<Sample[]> {
  return parse(await registry.metrics()).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** True when some sample of `name` has labels including `labels`. */
async function exists(registry: client.Registry, name: string, labels: Record<string, string>): Promise<boolean> {
  return (await samples(registry, name, labels)).length > 0;
}

/**
 * The sum of the samples of `name` whose labels include `labels` (0 when there is none): a
 * counter's total over the labels left out.
 */
async function value(registry: client.Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  return (await samples(registry, name, labels)).reduce((sum, s) => sum + s.value, 0);
}

/** Waits until `name{labels}` reaches `expected`. */
async function reaches(registry: client.Registry, name: string, labels: Record<string, string>, expected: number): Promise<void> {
  await eventually(async () => (await value(registry, name, labels)) >= expected);
}

let gateways: TestGateway[] = [];
let receiver: Receiver | undefined;
afterEach(async () => {
  await Promise.all(gateways.map((g) => g.sms.close()));
  await receiver?.close();
  gateways = [];
  receiver = undefined;
});

function gatewayWith(registry: client.Registry, options: Partial<SmsRouterOptions> = {}): TestGateway {
  const gateway = createGateway({ metrics: { client: typedClient, registry }, ...options });
  gateways.push(gateway);
  return gateway;
}

const GSM_161 = 'a'.repeat(161); // two SMS units

describe('metrics option', () => {
  it('counts accepted messages and SMS units by endpoint and profile, and their outcomes', async () => {
    const registry = new client.Registry();
    const { app } = gatewayWith(registry);
    const quick = await request(app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Hi' }, { recipient: '254712345679', message: GSM_161 }] });
    expect(quick.status).toBe(200);
    const premium = await request(app)
      .post('/api/outbox/premium')
      .set('X-API-Key', KEY)
      .send({ profile_code: '22021501', to: ['254712345670'], message: 'Premium' });
    expect(premium.status).toBe(200);

    await reaches(registry, 'sms_outbox_messages_finished_total', { endpoint: 'quick' }, 2);
    await reaches(registry, 'sms_outbox_messages_finished_total', { endpoint: 'premium' }, 1);
    expect(await value(registry, 'sms_outbox_messages_accepted_total', { endpoint: 'quick', profile: '12345' })).toBe(2);
    expect(await value(registry, 'sms_outbox_messages_accepted_total', { endpoint: 'premium', profile: '22021501' })).toBe(1);
    expect(await value(registry, 'sms_outbox_sms_units_accepted_total', { endpoint: 'quick', profile: '12345' })).toBe(3);
    expect(await value(registry, 'sms_outbox_sms_units_accepted_total', { endpoint: 'premium', profile: '22021501' })).toBe(1);
    expect(await value(registry, 'sms_outbox_messages_submitted_total', { endpoint: 'quick' })).toBe(2);
    expect(
      await value(registry, 'sms_outbox_messages_finished_total', { endpoint: 'quick', state: 'delivered', reason: 'delivered_to_terminal' }),
    ).toBe(2);
    // Nothing was refused and nothing went wrong.
    expect(await value(registry, 'sms_outbox_requests_rejected_total')).toBe(0);
    expect(await value(registry, 'sms_outbox_errors_total')).toBe(0);
  });

  it('counts refused requests by endpoint and status', async () => {
    const registry = new client.Registry();
    const { app } = gatewayWith(registry);
    await request(app).post('/api/outbox/create').set('X-API-Key', 'wrong').send({}).expect(401);
    await request(app).post('/api/outbox/create').set('X-API-Key', 'wrong').send({}).expect(401);
    await request(app)
      .post('/api/outbox/premium')
      .set('X-API-Key', KEY)
      .send({ profile_code: '00000', to: ['254712345670'], message: 'x' })
      .expect(422);
    await request(app).get('/api/outbox/delivery-status/nope').set('X-API-Key', KEY).expect(404);

    expect(await value(registry, 'sms_outbox_requests_rejected_total', { endpoint: 'quick', status: '401' })).toBe(2);
    expect(await value(registry, 'sms_outbox_requests_rejected_total', { endpoint: 'premium', status: '422' })).toBe(1);
    expect(await value(registry, 'sms_outbox_requests_rejected_total', { endpoint: 'status', status: '404' })).toBe(1);
    expect(await value(registry, 'sms_outbox_messages_accepted_total')).toBe(0);
  });

  it('counts delivery report attempts by result and records their duration', async () => {
    receiver = await startReceiver((n) => ({ status: n === 0 ? 500 : 204 }));
    const registry = new client.Registry();
    const { app } = gatewayWith(registry, { dlr: { schedule: [0, 1], allowPrivateAddresses: true, pollIntervalMs: 20 } });
    await request(app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Hi' }], dlr_callback_url: `${receiver.origin}/dlr` })
      .expect(200);

    await reaches(registry, 'sms_outbox_dlr_attempts_total', { result: 'sent' }, 1);
    expect(await value(registry, 'sms_outbox_dlr_attempts_total', { result: 'retrying' })).toBe(1);
    expect(await value(registry, 'sms_outbox_dlr_attempts_total', { result: 'failed' })).toBe(0);
    expect(await value(registry, 'sms_outbox_dlr_attempt_duration_seconds_count', { result: 'sent' })).toBe(1);
    expect(await value(registry, 'sms_outbox_dlr_attempt_duration_seconds_count', { result: 'retrying' })).toBe(1);
    // A local receiver answers well within the largest bucket.
    expect(await value(registry, 'sms_outbox_dlr_attempt_duration_seconds_bucket', { result: 'sent', le: '30' })).toBe(1);
    const seconds = await value(registry, 'sms_outbox_dlr_attempt_duration_seconds_sum', { result: 'sent' });
    expect(seconds).toBeGreaterThanOrEqual(0);
    expect(seconds).toBeLessThan(30);
  });

  it('counts carrier retries and the messages that end failed', async () => {
    const registry = new client.Registry();
    const { app } = gatewayWith(registry, {
      delivery: new SimulatorDelivery({ seed: 7, outcomes: { throttled: 1 }, retryAfterMs: 1 }),
      worker: { pollIntervalMs: 20, maxAttempts: 2, retryBaseMs: 1 },
    });
    await quickSend(app);

    await reaches(registry, 'sms_outbox_messages_finished_total', { state: 'failed' }, 1);
    expect(await value(registry, 'sms_outbox_submission_retries_total')).toBe(1);
    expect(await value(registry, 'sms_outbox_messages_submitted_total')).toBe(0);
    expect(await value(registry, 'sms_outbox_messages_finished_total', { state: 'delivered' })).toBe(0);
  });

  it('counts unexpected errors by source', async () => {
    const registry = new client.Registry();
    const { app, sms } = gatewayWith(registry);
    sms.on('message.accepted', () => {
      throw new Error('listener boom');
    });
    await quickSend(app);
    expect(await value(registry, 'sms_outbox_errors_total', { source: 'listener' })).toBe(1);
  });

  it('lets two routers share one registry: their counts add up', async () => {
    const registry = new client.Registry();
    await quickSend(gatewayWith(registry).app);
    await quickSend(gatewayWith(registry).app);
    expect(await value(registry, 'sms_outbox_messages_accepted_total', { endpoint: 'quick', profile: '12345' })).toBe(2);
  });

  it('uses prom-client\u2019s default registry when none is given', async () => {
    try {
      const gateway = createGateway({ metrics: { client: typedClient } });
      gateways.push(gateway);
      await quickSend(gateway.app);
      expect(await value(client.register, 'sms_outbox_messages_accepted_total', { profile: '12345' })).toBe(1);
    } finally {
      client.register.clear();
    }
  });

  it('has every counter series with known labels at 0 before anything happens, and the build info', async () => {
    const registry = new client.Registry();
    const { sms } = gatewayWith(registry);
    await sms.ready();
    const series = async (name: string, labels: Record<string, string>) => (await samples(registry, name, labels)).map((s) => s.value);
    // An alert on the first failed report, or the first refused key, has a series to fire on.
    for (const result of ['sent', 'retrying', 'failed']) expect(await series('sms_outbox_dlr_attempts_total', { result })).toEqual([0]);
    for (const source of ['request', 'worker', 'receipt', 'dlr', 'listener', 'delivery', 'storage']) {
      expect(await series('sms_outbox_errors_total', { source })).toEqual([0]);
    }
    for (const endpoint of ['quick', 'premium', 'status']) {
      for (const status of ['400', '401', '403', '404', '413', '415', '422', '429']) {
        expect(await series('sms_outbox_requests_rejected_total', { endpoint, status })).toEqual([0]);
      }
    }
    for (const endpoint of ['quick', 'premium']) {
      expect(await series('sms_outbox_messages_submitted_total', { endpoint })).toEqual([0]);
      expect(await series('sms_outbox_messages_finished_total', { endpoint, state: 'failed', reason: 'unknown' })).toEqual([0]);
      expect(await series('sms_outbox_messages_finished_total', { endpoint, state: 'delivered', reason: 'delivered_to_terminal' })).toEqual([0]);
    }
    expect(await series('sms_outbox_submission_retries_total', {})).toEqual([0]);
    expect(await series('sms_outbox_inbound_messages_total', {})).toEqual([0]);
    // Profiles are the host's to know: their series start with their first message.
    expect(await samples(registry, 'sms_outbox_messages_accepted_total')).toEqual([]);
    expect(await samples(registry, 'sms_outbox_build_info')).toEqual([{ name: 'sms_outbox_build_info', labels: { version: VERSION }, value: 1 }]);
    // The simulator's one connection is up from the start.
    expect(await samples(registry, 'sms_outbox_carrier_bound')).toEqual([{ name: 'sms_outbox_carrier_bound', labels: { bind: 'simulator' }, value: 1 }]);
    expect(await value(registry, 'sms_outbox_carrier_reconnects_total', { bind: 'simulator' })).toBe(0);
  });

  it('drops the profile label with `profileLabel: false`, keeping one series per endpoint', async () => {
    const registry = new client.Registry();
    const { app } = gatewayWith(registry, { metrics: { client: typedClient, registry, profileLabel: false } });
    expect((await samples(registry, 'sms_outbox_messages_accepted_total')).map((s) => s.labels)).toEqual([{ endpoint: 'quick' }, { endpoint: 'premium' }]);
    await request(app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: GSM_161 }] })
      .expect(200);
    expect(await samples(registry, 'sms_outbox_messages_accepted_total', { endpoint: 'quick' })).toEqual([
      { name: 'sms_outbox_messages_accepted_total', labels: { endpoint: 'quick' }, value: 1 },
    ]);
    expect(await value(registry, 'sms_outbox_sms_units_accepted_total', { endpoint: 'quick' })).toBe(2);
    expect(await exists(registry, 'sms_outbox_messages_accepted_total', { profile: '12345' })).toBe(false);
    // A second router on the same registry must label alike: told at construction, not at its first count.
    expect(() => createGateway({ metrics: { client: typedClient, registry } })).toThrow(
      /`sms_outbox_messages_accepted_total` is already registered with the labels \[endpoint\], not \[endpoint, profile\]/,
    );
  });

  it('refuses a bad metrics option at construction, saying what to pass', () => {
    expect(() => createGateway({ metrics: { client: typedClient, profileLabel: 'no' as unknown as boolean } })).toThrow(
      /`metrics.profileLabel` must be true or false/,
    );
    const registry = new client.Registry();
    expect(() => createGateway({ metrics: registry as unknown as SmsRouterOptions['metrics'] })).toThrow(
      /`metrics.client` must be the prom-client module/,
    );
    expect(() => createGateway({ metrics: { client: typedClient, registy: registry } as unknown as SmsRouterOptions['metrics'] })).toThrow(
      /unknown option `registy`\. Did you mean `registry`\?/,
    );
    expect(() => createGateway({ metrics: { client: typedClient, registry: {} as client.Registry } })).toThrow(
      /`metrics.registry` must be a prom-client Registry/,
    );
    const taken = new client.Registry();
    new client.Gauge({ name: 'sms_outbox_errors_total', help: 'not ours', registers: [taken] });
    expect(() => createGateway({ metrics: { client: typedClient, registry: taken } })).toThrow(/already registered as another kind of metric/);
  });

  it('shows the queue by class every 5 s, and how long messages waited in it', async () => {
    // Only the sampler's interval is faked: requests, the worker and the carrier run for real.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const registry = new client.Registry();
      const carrier = new GatedDelivery('all');
      const { app, sms } = gatewayWith(registry, { storage: new MemoryStorage(), delivery: carrier, worker: { concurrency: 1 } });
      await sms.ready();
      const sent = await request(app)
        .post('/api/outbox/create')
        .set('X-API-Key', KEY)
        .send({ profile_code: '12345', messages: Array.from({ length: 5 }, () => ({ recipient: '254712345678', message: 'queued' })) });
      expect(sent.status).toBe(200);
      expect(await value(registry, 'sms_outbox_queue_depth', { class: 'bulk' })).toBe(0);
      await vi.advanceTimersByTimeAsync(5_000);
      await eventually(async () => (await value(registry, 'sms_outbox_queue_depth', { class: 'bulk' })) === 5);
      expect(await value(registry, 'sms_outbox_queue_depth', { class: 'transactional' })).toBe(0);
      expect(await value(registry, 'sms_outbox_queue_oldest_age_seconds')).toBeGreaterThanOrEqual(0);

      carrier.open();
      await reaches(registry, 'sms_outbox_accept_to_submit_seconds_count', { class: 'bulk' }, 5);
      await vi.advanceTimersByTimeAsync(5_000);
      await eventually(async () => (await value(registry, 'sms_outbox_queue_depth', { class: 'bulk' })) === 0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('records how long submitted messages took to reach their final state, by class', async () => {
    const registry = new client.Registry();
    const { app } = gatewayWith(registry, { delivery: new SimulatorDelivery({ seed: 7, latencyMs: [1, 10], outcomes: { delivered: 1 } }) });
    const sent = await request(app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', messages: Array.from({ length: 4 }, (_, i) => ({ recipient: `25471234567${i}`, message: 'Hi' })) });
    expect(sent.status).toBe(200);

    await reaches(registry, 'sms_outbox_messages_finished_total', { state: 'delivered' }, 4);
    expect(await value(registry, 'sms_outbox_submit_to_final_seconds_count', { class: 'bulk' })).toBe(4);
    expect(await value(registry, 'sms_outbox_submit_to_final_seconds_count', { class: 'transactional' })).toBe(0);
    // The simulator's receipts come within a second or so; the buckets reach 48 h.
    expect(await value(registry, 'sms_outbox_submit_to_final_seconds_bucket', { class: 'bulk', le: '10' })).toBe(4);
    expect(await value(registry, 'sms_outbox_submit_to_final_seconds_bucket', { class: 'bulk', le: '172800' })).toBe(4);
    const seconds = await value(registry, 'sms_outbox_submit_to_final_seconds_sum', { class: 'bulk' });
    expect(seconds).toBeGreaterThanOrEqual(0);
    expect(seconds).toBeLessThan(10);
  });

  it("counts messages by their recipient's country at each stage, and a country that is not an ISO code as unknown", async () => {
    const registry = new client.Registry();
    const { app } = gatewayWith(registry);
    const messages = ['254712345678', '254712345679', '2348031234567', '4915123456789'].map((recipient) => ({ recipient, message: 'Hi' }));
    await request(app).post('/api/outbox/create').set('X-API-Key', KEY).send({ profile_code: '12345', messages }).expect(200);

    await reaches(registry, 'sms_outbox_country_messages_total', { stage: 'delivered' }, 4);
    const count = (country: string, stage: string) => value(registry, 'sms_outbox_country_messages_total', { country, stage });
    for (const stage of ['accepted', 'submitted', 'delivered']) {
      expect([await count('KE', stage), await count('NG', stage), await count('DE', stage)]).toEqual([2, 1, 1]);
    }
    expect(await count('KE', 'failed')).toBe(0);

    // Straight from the events: a record without a country (an earlier release's), a
    // non-geographic number's, and a code outside ISO 3166 all count as unknown.
    const events = new SmsEventEmitter();
    const direct = new client.Registry();
    const detach = attachMetrics(events, { client: typedClient, registry: direct, profileLabel: false });
    const record = (country: string | null | undefined, state: MessageRecord['state']) =>
      ({ ref: 'r', endpoint: 'quick', priority: 'bulk', state, statusReason: null, createdAt: 0, updatedAt: 0, country }) as unknown as MessageRecord;
    try {
      for (const country of [undefined, null, 'XK', 'ke', 'NG']) events.emit('message.status', { message: record(country, 'failed'), previousState: 'queued' });
      const failed = await samples(direct, 'sms_outbox_country_messages_total', { stage: 'failed' });
      expect(Object.fromEntries(failed.map((s) => [s.labels.country, s.value]))).toEqual({ unknown: 4, NG: 1 });
    } finally {
      detach();
    }
  });

  it('counts paused callback URLs, and how many are paused now', async () => {
    const events = new SmsEventEmitter();
    const direct = new client.Registry();
    const detach = attachMetrics(events, { client: typedClient, registry: direct, profileLabel: false });
    try {
      expect(await value(direct, 'sms_outbox_callback_endpoints_paused')).toBe(0);
      for (const url of ['https://a.example/dlr', 'https://b.example/dlr']) events.emit('callback.endpoint_paused', { url, failingSince: 0, at: 1 });
      events.emit('callback.endpoint_resumed', { url: 'https://a.example/dlr', by: 'api', at: 2 });
      expect(await value(direct, 'sms_outbox_callback_endpoints_paused')).toBe(1);
      expect(await value(direct, 'sms_outbox_callback_endpoint_pauses_total')).toBe(2);
    } finally {
      detach();
    }
  });

  it('remembers at most 100,000 submit times, dropping the oldest: a dropped message is not observed', async () => {
    const registry = new client.Registry();
    const events = new SmsEventEmitter();
    const detach = attachMetrics(events, { client: typedClient, registry, profileLabel: true });
    const record = (ref: string, state: MessageRecord['state'], updatedAt: number, priority: MessageRecord['priority'] = 'transactional') =>
      ({ ref, endpoint: 'quick', priority, state, statusReason: null, createdAt: 0, updatedAt }) as unknown as MessageRecord;
    try {
      for (let i = 0; i <= 100_000; i++) events.emit('message.submitted', { message: record(`m${i}`, 'submitted', 1_000) });
      // m0 was the oldest when the 100,001st came: dropped. m1 and the last are remembered.
      for (const ref of ['m0', 'm1', 'm100000']) {
        events.emit('message.status', { message: record(ref, 'delivered', 3_000), previousState: 'submitted' });
      }
      // One that ends without having been submitted here (another instance's) is not observed either.
      events.emit('message.status', { message: record('elsewhere', 'delivered', 3_000), previousState: 'submitted' });
      expect(await value(registry, 'sms_outbox_submit_to_final_seconds_count', { class: 'transactional' })).toBe(2);
      expect(await value(registry, 'sms_outbox_submit_to_final_seconds_sum', { class: 'transactional' })).toBe(4);
      // Each is observed once: a second final transition (none should come) finds no entry.
      events.emit('message.status', { message: record('m1', 'delivered', 5_000), previousState: 'submitted' });
      expect(await value(registry, 'sms_outbox_submit_to_final_seconds_count', { class: 'transactional' })).toBe(2);
    } finally {
      detach();
    }
  });
});

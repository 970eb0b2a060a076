/**
 * OpenTelemetry: one trace per message, from the send request through each claim, each part's
 * submit and receipt to each delivery report attempt, whose receiver gets the trace in a
 * `traceparent` header; an inbound message's own trace, from its arrival to each webhook
 * attempt, whose receiver gets it the same way; nothing when no tracer provider is registered
 * or `tracing: false`.
 */
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { outcome, SimulatorDelivery, staticKeys, type SmsRouterOptions } from '../../src/index.js';
import { cleanupAfterEach, type Receiver } from '../dlr/helpers.js';
import { createGateway, KEY } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';
import { NaiveRecordStore } from '../helpers/naive-record-store.js';
import { ScriptedDelivery } from '../helpers/scripted-delivery.js';

const SHORT_CODE = '22021501';
const SECRET = 'whsec_' + Buffer.from('tracing-test-secret').toString('base64');
const { cleanups, receiver: startReceiver } = cleanupAfterEach();

let exporter: InMemorySpanExporter;

/** Registers an SDK provider that keeps finished spans in memory, until the test ends. */
function recordSpans(): void {
  exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  cleanups.push(async () => {
    trace.disable();
    await provider.shutdown();
  });
}

afterEach(() => exporter?.reset());

/** Sends one quick message with a report to `receiver`, has it delivered, and waits for its report. */
async function sendAndDeliver(receiver: Receiver, options: Partial<SmsRouterOptions> = {}): Promise<void> {
  const carrier = new ScriptedDelivery();
  const { app, sms } = createGateway({
    delivery: carrier,
    dlr: { allowPrivateAddresses: ['127.0.0.0/8'], pollIntervalMs: 20, secret: SECRET },
    ...options,
  });
  cleanups.push(() => sms.close());
  const answer = await request(app)
    .post('/api/outbox/create')
    .set('x-api-key', KEY)
    .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'traced' }], dlr_callback_url: `${receiver.origin}/dlr` });
  expect(answer.status).toBe(200);
  const part = await eventually(() => carrier.submitted[0]);
  await carrier.receipt({ carrierId: part.carrierId, outcome: outcome('delivered', 'delivered_to_terminal') });
  await eventually(() => receiver.requests[0], { what: 'the delivery report' });
}

/**
 * Has the carrier deliver one MO message to a short code whose owner forwards it to
 * `receiver`, and waits until the receiver has got `posts` POSTs in all.
 */
async function forwardInbound(receiver: Receiver, posts: number, options: Partial<SmsRouterOptions> = {}): Promise<void> {
  const carrier = new SimulatorDelivery({ seed: 7, latencyMs: [1, 5] });
  const { sms } = createGateway({
    verifyKey: staticKeys([{ key: KEY, id: 'acme', profiles: ['12345', SHORT_CODE], inboundUrl: `${receiver.origin}/inbound` }]),
    delivery: carrier,
    dlr: { allowPrivateAddresses: ['127.0.0.0/8'], pollIntervalMs: 20, secret: SECRET, schedule: [0, 20] },
    ...options,
  });
  cleanups.push(() => sms.close());
  await sms.ready();
  await carrier.simulateInbound({ from: '+254711000001', to: SHORT_CODE, text: 'Hello there' });
  await eventually(() => receiver.requests.length >= posts, { what: `${posts} POSTs to the receiver` });
}

const startOf = (span: ReadableSpan): number => span.startTime[0] * 1e9 + span.startTime[1];

/** The spans of this package recorded so far, once `until` accepts them. */
function spansOnce(until: (spans: ReadableSpan[]) => boolean, what: string): Promise<ReadableSpan[]> {
  return eventually(() => exporter.getFinishedSpans().filter((span) => span.name.startsWith('sms.')), { until, what });
}

/** How many of `spans` are named `name`. */
const count = (spans: readonly ReadableSpan[], name: string): number => spans.filter((span) => span.name === name).length;

/**
 * Checks that `steps` started in this order. Spans start on the wall clock, to the
 * millisecond, so two steps of one millisecond may share a start: each starts no earlier than
 * the one before.
 */
function expectInOrder(steps: readonly ReadableSpan[]): void {
  for (let i = 1; i < steps.length; i++) {
    expect(startOf(steps[i]!), `${steps[i]!.name} #${i} starts after ${steps[i - 1]!.name}`).toBeGreaterThanOrEqual(startOf(steps[i - 1]!));
  }
}

/** Checks that every span of `spans` but `root` is in `root`'s trace, a child of it. */
function expectOneTrace(root: ReadableSpan, spans: readonly ReadableSpan[]): void {
  const { traceId, spanId } = root.spanContext();
  for (const span of spans) {
    expect(span.spanContext().traceId, span.name).toBe(traceId);
    if (span !== root) expect(span.parentSpanContext?.spanId, span.name).toBe(spanId);
  }
}

/** The `traceparent` a receiver continues `span`'s trace from (sampled). */
const traceparentOf = (span: ReadableSpan): string => `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`;

const LONG_TEXT = 'A message of two parts, '.repeat(8);

describe('tracing', () => {
  // The memory storage keeps full records; a record store's rows go through the ledger.
  const storages = [
    ['the memory storage', () => ({})],
    ['a record store', () => ({ storage: new NaiveRecordStore() })],
  ] as const;

  it.each(storages)('gives a message one trace, request to report attempt, and sends its traceparent with the signed report (%s)', async (_name, storage) => {
    recordSpans();
    const receiver = await startReceiver();
    await sendAndDeliver(receiver, storage());
    const spans = await spansOnce((found) => found.some((span) => span.name === 'sms.report'), 'the report span');
    const named = (name: string) => spans.find((span) => span.name === name)!;
    expect(spans.map((span) => span.name).sort()).toEqual(['sms.claim', 'sms.receipt', 'sms.report', 'sms.request', 'sms.store', 'sms.submit']);
    const requestSpan = named('sms.request');
    const reportSpan = named('sms.report');
    expectInOrder(['sms.request', 'sms.store', 'sms.claim', 'sms.submit', 'sms.receipt', 'sms.report'].map(named));
    // Handed to the worker at its insert: taken without a storage call.
    expect(named('sms.claim').attributes).toMatchObject({ 'sms.claim.source': 'hand-off', 'sms.submit.attempt': 1 });
    // Every later step hangs under the request, however long after it.
    expectOneTrace(requestSpan, spans);
    expect(requestSpan.attributes['http.response.status_code']).toBe(200);
    expect(reportSpan.attributes['http.response.status_code']).toBe(200);
    expect(named('sms.receipt').attributes['sms.receipt.result']).toBe('terminal');

    const report = receiver.requests[0]!;
    expect(report.headers.traceparent).toBe(traceparentOf(reportSpan));
    // The signature covers the body; the traceparent rides beside it.
    expect(new Webhook(SECRET).verify(report.body, report.headers as Record<string, string>)).toEqual(JSON.parse(report.body));
  });

  it.each(storages)('traces a message claimed again after a failed submit, each of its parts and each part\'s receipt, in one trace (%s)', async (_name, storage) => {
    recordSpans();
    const receiver = await startReceiver();
    const carrier = new ScriptedDelivery();
    let failures = 1;
    carrier.beforeSubmit = () => {
      if (failures-- > 0) throw new Error('carrier busy');
    };
    const { app, sms } = createGateway({
      delivery: carrier,
      worker: { pollIntervalMs: 20, retryBaseMs: 1 },
      dlr: { allowPrivateAddresses: ['127.0.0.0/8'], pollIntervalMs: 20, secret: SECRET },
      ...storage(),
    });
    cleanups.push(() => sms.close());
    const answer = await request(app)
      .post('/api/outbox/create')
      .set('x-api-key', KEY)
      .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: LONG_TEXT }], dlr_callback_url: `${receiver.origin}/dlr` });
    expect(answer.status).toBe(200);
    const [first, second] = await eventually(() => carrier.submitted.length === 2 && carrier.submitted, { what: 'both parts submitted' });
    // The first receipt ends its part only; the second ends the message.
    await carrier.receipt({ carrierId: first!.carrierId, outcome: outcome('delivered', 'delivered_to_terminal') });
    await carrier.receipt({ carrierId: second!.carrierId, outcome: outcome('delivered', 'delivered_to_terminal') });
    await eventually(() => receiver.requests[0], { what: 'the delivery report' });
    const spans = await spansOnce((found) => count(found, 'sms.report') === 1, 'the report span');

    expect(spans.map((span) => span.name).sort()).toEqual([
      'sms.claim', 'sms.claim', 'sms.receipt', 'sms.receipt', 'sms.report', 'sms.request', 'sms.store', 'sms.submit', 'sms.submit', 'sms.submit',
    ]);
    const named = (name: string) => spans.find((span) => span.name === name)!;
    const claim = (source: string) => spans.find((span) => span.name === 'sms.claim' && span.attributes['sms.claim.source'] === source)!;
    const submits = spans.filter((span) => span.name === 'sms.submit').sort((a, b) => startOf(a) - startOf(b));
    const failed = submits.find((span) => span.status.code === SpanStatusCode.ERROR)!;
    const parts = submits.filter((span) => span !== failed).sort((a, b) => Number(a.attributes['sms.part_index']) - Number(b.attributes['sms.part_index']));
    const receipt = (result: string) => spans.find((span) => span.name === 'sms.receipt' && span.attributes['sms.receipt.result'] === result)!;
    expect(failed.status.message).toBe('carrier busy');
    // A submit records the carrier id as stored (normalised), a receipt as the carrier wrote it.
    expect(parts.map((span) => String(span.attributes['sms.carrier_id']).toUpperCase())).toEqual([first!.carrierId, second!.carrierId]);
    expectInOrder([
      named('sms.request'), named('sms.store'), claim('hand-off'), failed, claim('storage'), parts[0]!, parts[1]!, receipt('part'), receipt('terminal'), named('sms.report'),
    ]);
    expectOneTrace(named('sms.request'), spans);
    // The claim was the message's second submit attempt, by itself in its claim.
    expect(claim('storage').attributes).toMatchObject({ 'sms.submit.attempt': 2, 'sms.claim.size': 1 });
    expect(receipt('part').attributes['sms.carrier_id']).toBe(first!.carrierId);
    expect(receiver.requests[0]!.headers.traceparent).toBe(traceparentOf(named('sms.report')));
  });

  it('starts an inbound message\'s own trace at its arrival, with a span per webhook attempt whose traceparent its receiver gets', async () => {
    recordSpans();
    // The first attempt fails, so the webhook is retried.
    const receiver = await startReceiver((n) => ({ status: n === 0 ? 500 : 204 }));
    await forwardInbound(receiver, 2);
    const spans = await spansOnce((found) => count(found, 'sms.inbound') === 2, 'both attempt spans');

    expect(spans.map((span) => span.name).sort()).toEqual(['sms.inbound', 'sms.inbound', 'sms.mo']);
    const arrival = spans.find((span) => span.name === 'sms.mo')!;
    const attempts = spans.filter((span) => span.name === 'sms.inbound').sort((a, b) => Number(a.attributes['sms.inbound.attempt']) - Number(b.attributes['sms.inbound.attempt']));
    // No request began it: the arrival is the root of a trace of its own.
    expect(arrival.parentSpanContext).toBeUndefined();
    expectOneTrace(arrival, spans);
    expectInOrder([arrival, ...attempts]);
    expect(attempts.map((span) => span.attributes['http.response.status_code'])).toEqual([500, 204]);
    expect(attempts.map((span) => span.status.code)).toEqual([SpanStatusCode.ERROR, SpanStatusCode.UNSET]);
    expect(attempts[0]!.attributes['sms.inbound_ref']).toBe(arrival.attributes['sms.inbound_ref']);
    // Each attempt names its own span, beside the signature.
    for (const [i, attempt] of attempts.entries()) {
      const posted = receiver.requests[i]!;
      expect(posted.headers.traceparent).toBe(traceparentOf(attempt));
      expect(new Webhook(SECRET).verify(posted.body, posted.headers as Record<string, string>)).toEqual(JSON.parse(posted.body));
    }
  });

  it('records nothing and sends no traceparent when no tracer provider is registered', async () => {
    const receiver = await startReceiver();
    await sendAndDeliver(receiver);
    expect(receiver.requests[0]!.headers.traceparent).toBeUndefined();
  });

  it('records nothing with tracing: false, even with a provider registered', async () => {
    recordSpans();
    const receiver = await startReceiver();
    await sendAndDeliver(receiver, { tracing: false });
    await forwardInbound(receiver, 2, { tracing: false });
    expect(exporter.getFinishedSpans().filter((span) => span.name.startsWith('sms.'))).toEqual([]);
    expect(receiver.requests.map((posted) => posted.headers.traceparent)).toEqual([undefined, undefined]);
  });
});

/**
 * OpenTelemetry: one trace per message, from the send request to each delivery report
 * attempt, whose receiver gets the trace in a `traceparent` header; nothing when no tracer
 * provider is registered or `tracing: false`.
 */
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { outcome, type SmsRouterOptions } from '../../src/index.js';
import { cleanupAfterEach, type Receiver } from '../dlr/helpers.js';
import { createGateway, KEY } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';
import { NaiveRecordStore } from '../helpers/naive-record-store.js';
import { ScriptedDelivery } from '../helpers/scripted-delivery.js';

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

const byStart = (a: ReadableSpan, b: ReadableSpan): number => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1];

describe('tracing', () => {
  // The memory storage keeps full records; a record store's rows go through the ledger.
  it.each([
    ['the memory storage', () => ({})],
    ['a record store', () => ({ storage: new NaiveRecordStore() })],
  ])('gives a message one trace, request to report attempt, and sends its traceparent with the signed report (%s)', async (_name, storage) => {
    recordSpans();
    const receiver = await startReceiver();
    await sendAndDeliver(receiver, storage());
    const spans = await eventually(() => exporter.getFinishedSpans().filter((span) => span.name.startsWith('sms.')), {
      until: (found) => found.some((span) => span.name === 'sms.report'),
      what: 'the report span',
    });
    spans.sort(byStart);
    // The receipt span starts at the receipt's arrival as the router's clock read it, the
    // others at the tracer's own high-resolution clock: the two may differ by a millisecond
    // or two, so the receipt and the report it led to are checked as a pair.
    const names = spans.map((span) => span.name);
    expect(names.slice(0, 3)).toEqual(['sms.request', 'sms.store', 'sms.submit']);
    expect(names.slice(3).sort()).toEqual(['sms.receipt', 'sms.report']);
    const requestSpan = spans[0];
    const reportSpan = spans.find((span) => span.name === 'sms.report');
    const traceId = requestSpan!.spanContext().traceId;
    for (const span of spans) expect(span.spanContext().traceId, span.name).toBe(traceId);
    // Every later step hangs under the request, however long after it.
    for (const span of spans.slice(1)) expect(span.parentSpanContext?.spanId, span.name).toBe(requestSpan!.spanContext().spanId);
    expect(requestSpan!.attributes['http.response.status_code']).toBe(200);
    expect(reportSpan!.attributes['http.response.status_code']).toBe(200);

    const report = receiver.requests[0]!;
    const { traceId: spanTrace, spanId } = reportSpan!.spanContext();
    expect(report.headers.traceparent).toBe(`00-${spanTrace}-${spanId}-01`);
    // The signature covers the body; the traceparent rides beside it.
    expect(new Webhook(SECRET).verify(report.body, report.headers as Record<string, string>)).toEqual(JSON.parse(report.body));
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
    expect(exporter.getFinishedSpans().filter((span) => span.name.startsWith('sms.'))).toEqual([]);
    expect(receiver.requests[0]!.headers.traceparent).toBeUndefined();
  });
});

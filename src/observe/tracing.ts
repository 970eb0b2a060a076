/**
 * OpenTelemetry tracing, one trace per message: the send request's span, and under it the
 * insert, each claim of it by a worker, each part's submission to the carrier, each receipt
 * and each delivery report attempt. The gaps between them are asynchronous (a carrier, a
 * retry hours later, maybe on another instance), so the request span's W3C trace context
 * (`traceparent`) is stored with the message and every later span starts as its child. An
 * inbound (MO) message has no request: its trace starts when the carrier delivers it, and its
 * webhook attempts are children of that span, stored with it the same way.
 *
 * `@opentelemetry/api` is an optional peer: it is looked for once, when a router is made,
 * with a `require` that may fail (a static import would make it a hard dependency). Without
 * it, or with `tracing: false`, the router holds `null` and every hook is a skipped branch.
 * With it but no tracer provider registered, each hook costs a look at the global provider.
 *
 * The global provider is read through the API's own duck-typed surface rather than
 * `instanceof`: the host may load the API as ES module and this package as CommonJS (or the
 * reverse), two copies that share only the global registration.
 */
import { createRequire } from 'node:module';
import type * as OtelApi from '@opentelemetry/api';
import type { Context, Span, SpanContext, Tracer, TracerProvider } from '@opentelemetry/api';
import { VERSION } from '../version.js';
import { PartTraces } from './part-traces.js';

/** The instrumentation scope the spans are recorded under. */
export const TRACER_NAME = 'sms-outbox';

/** The span names, in the order a message meets them; then an inbound message's. */
export const SPAN_NAMES = {
  request: 'sms.request',
  insert: 'sms.store',
  claim: 'sms.claim',
  submit: 'sms.submit',
  receipt: 'sms.receipt',
  report: 'sms.report',
  mo: 'sms.mo',
  inbound: 'sms.inbound',
} as const;

/** Attributes of a span: what `Span.setAttributes` takes. */
export type SpanFields = Record<string, string | number | boolean>;

/** A span the router started; ended once. */
export interface TracedSpan {
  /** The span's own W3C `traceparent`: what its children (and a webhook's receiver) continue. */
  readonly traceparent: string;
  /** Adds attributes. */
  set(fields: SpanFields): void;
  /** Ends the span, marked as failed with `error` when given. */
  end(error?: unknown): void;
}

/** What the router's parts call; `null` in their deps when tracing is off or the API absent. */
export interface MessageTracing {
  /**
   * Starts the span of a send request of `method` to `url` (its query, if any, left out of
   * the span), a child of the active context (a host's HTTP server span, when it has one), or
   * `null` when no tracer provider is registered.
   */
  request(method: string, url: string): TracedSpan | null;
  /**
   * Starts span `name` as a child of the span `traceparent` names (a message's stored one),
   * or `null` when `traceparent` is absent or unreadable, or no tracer provider is registered.
   * `startTime` (epoch ms) backdates it, for a span whose message was known only at its end.
   */
  child(name: string, traceparent: string | null | undefined, fields: SpanFields, kind?: SpanKindName, startTime?: number): TracedSpan | null;
  /**
   * Starts span `name` as the root of a trace of its own, whatever context is active (an
   * inbound message's, which no request of ours began), or `null` when no tracer provider is
   * registered.
   */
  root(name: string, fields: SpanFields, kind?: SpanKindName): TracedSpan | null;
  /** The traces of messages of several parts, for the receipts of their parts (part-traces.ts). */
  readonly parts: PartTraces;
}

/** The span kinds used here (the API's `SpanKind` names). */
export type SpanKindName = 'INTERNAL' | 'CLIENT' | 'CONSUMER';

type Api = typeof OtelApi;
/** The `ProxyTracerProvider` surface the global provider has (duck-typed, see the module comment). */
interface ProxyProvider extends TracerProvider {
  getDelegate?(): TracerProvider;
  getDelegateTracer?(name: string, version?: string): Tracer | undefined;
}

/** The API, once looked for: `null` when it is not installed (or does not load). */
let loaded: Api | null | undefined;

function otelApi(): Api | null {
  if (loaded === undefined) {
    try {
      loaded = createRequire(import.meta.url)('@opentelemetry/api') as Api;
    } catch {
      // Tracing is an extra: a missing or broken API never stops the router.
      loaded = null;
    }
  }
  return loaded;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The W3C `traceparent` of `context` (version 00). */
export function formatTraceparent(context: SpanContext): string {
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, '0');
  return `00-${context.traceId}-${context.spanId}-${flags}`;
}

/** The trace id in `traceparent`, or `null` when it is not a version-00 `traceparent`. */
export function traceIdOf(traceparent: string): string | null {
  return TRACEPARENT.exec(traceparent)?.[1] ?? null;
}

class Traced implements TracedSpan {
  readonly traceparent: string;

  constructor(
    private readonly api: Api,
    private readonly span: Span,
  ) {
    this.traceparent = formatTraceparent(span.spanContext());
  }

  set(fields: SpanFields): void {
    this.span.setAttributes(fields);
  }

  end(error?: unknown): void {
    if (error !== undefined) {
      this.span.recordException(error instanceof Error ? error : String(error));
      this.span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    }
    this.span.end();
  }
}

class ApiTracing implements MessageTracing {
  /** The provider the tracer below came from, so a provider registered later is noticed. */
  #provider: TracerProvider | null = null;
  #tracer: Tracer | null = null;
  readonly parts = new PartTraces();

  constructor(private readonly api: Api) {}

  /** The tracer of the registered provider, or `null` when none is registered. */
  #current(): Tracer | null {
    const global = this.api.trace.getTracerProvider() as ProxyProvider;
    const provider = typeof global.getDelegate === 'function' ? global.getDelegate() : global;
    if (provider !== this.#provider) {
      this.#provider = provider;
      this.#tracer =
        typeof global.getDelegateTracer === 'function'
          ? (global.getDelegateTracer(TRACER_NAME, VERSION) ?? null)
          : global.getTracer(TRACER_NAME, VERSION);
    }
    return this.#tracer;
  }

  request(method: string, url: string): TracedSpan | null {
    const tracer = this.#current();
    if (tracer === null) return null;
    const query = url.indexOf('?');
    const fields = { 'http.request.method': method, 'url.path': query === -1 ? url : url.slice(0, query) };
    const active = this.api.context.active();
    // Under a host's own HTTP server span it is a step of that request; else it is the server span.
    const kind = this.api.trace.getSpan(active) === undefined ? this.api.SpanKind.SERVER : this.api.SpanKind.INTERNAL;
    const span = tracer.startSpan(SPAN_NAMES.request, { kind, attributes: fields }, active);
    return new Traced(this.api, span);
  }

  child(name: string, traceparent: string | null | undefined, fields: SpanFields, kind: SpanKindName = 'INTERNAL', startTime?: number): TracedSpan | null {
    if (traceparent == null) return null;
    const tracer = this.#current();
    if (tracer === null) return null;
    const parent = this.#parent(traceparent);
    if (parent === null) return null;
    const span = tracer.startSpan(name, { kind: this.api.SpanKind[kind], attributes: fields, startTime }, parent);
    return new Traced(this.api, span);
  }

  root(name: string, fields: SpanFields, kind: SpanKindName = 'INTERNAL'): TracedSpan | null {
    const tracer = this.#current();
    if (tracer === null) return null;
    const span = tracer.startSpan(name, { kind: this.api.SpanKind[kind], attributes: fields, root: true });
    return new Traced(this.api, span);
  }

  #parent(traceparent: string): Context | null {
    const match = TRACEPARENT.exec(traceparent);
    if (match === null) return null;
    const spanContext: SpanContext = { traceId: match[1]!, spanId: match[2]!, traceFlags: parseInt(match[3]!, 16), isRemote: true };
    if (!this.api.isSpanContextValid(spanContext)) return null;
    return this.api.trace.setSpanContext(this.api.ROOT_CONTEXT, spanContext);
  }
}

/**
 * The router's tracing: `null` when `enabled` is false or `@opentelemetry/api` is not
 * installed, so the hooks cost one branch.
 */
export function createTracing(enabled: boolean): MessageTracing | null {
  if (!enabled) return null;
  const api = otelApi();
  return api === null ? null : new ApiTracing(api);
}

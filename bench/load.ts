/**
 * The load generator: a thin wrapper over autocannon's programmatic API that posts one
 * fixed JSON body to 127.0.0.1 and returns the figures the report needs.
 */
import autocannon from 'autocannon';
import { keyedRequests } from './idempotency.js';

/** What to send, and for how long. */
export interface LoadOptions {
  /** Port on 127.0.0.1 (traffic never leaves the machine). */
  port: number;
  /** Request path, e.g. `/api/outbox/create`. */
  path: string;
  /** The JSON body, sent as is on every request. */
  body: string;
  /** Extra request headers (the API key). */
  headers?: Record<string, string>;
  /** Give every request an `Idempotency-Key` of its own, starting with this prefix (bench/idempotency.ts). */
  idempotencyKeys?: string;
  /** With `idempotencyKeys`: every `every`-th request sends `body` instead (a scheduled send). */
  scheduled?: { body: string; every: number };
  /** Concurrent connections. */
  connections: number;
  /** Seconds to run; ignored when `amount` is given. */
  durationSec?: number;
  /** Stop after this many requests instead of after a duration. */
  amount?: number;
  /** Give up after this many ms even if `amount` is not reached (the run stays bounded). */
  deadlineMs?: number;
}

/** What one load run measured. */
export interface LoadResult {
  /** Requests answered 2xx per second (over the run's wall time). */
  requestsPerSec: number;
  /** Median latency, ms. */
  p50Ms: number;
  /** 99th percentile latency, ms. */
  p99Ms: number;
  /** Requests answered 2xx. */
  ok: number;
  /** Requests answered with another status. */
  non2xx: number;
  /** Socket errors and timeouts. */
  errors: number;
  /** Wall time of the run, s. */
  seconds: number;
}

/** Runs autocannon once against 127.0.0.1 and summarises it. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const instance = autocannon({
    url: `http://127.0.0.1:${options.port}${options.path}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: options.body,
    ...(options.idempotencyKeys === undefined ? {} : { requests: keyedRequests(options.idempotencyKeys, options.scheduled) }),
    connections: options.connections,
    pipelining: 1,
    // autocannon wants a duration even with `amount`; `amount` takes precedence.
    duration: options.durationSec ?? 3600,
    ...(options.amount === undefined ? {} : { amount: options.amount }),
    timeout: 30,
  });
  const deadline =
    options.deadlineMs === undefined ? null : setTimeout(() => (instance as unknown as { stop(): void }).stop(), options.deadlineMs);
  const result = await instance;
  if (deadline) clearTimeout(deadline);
  const ok = result['2xx'];
  const seconds = result.duration;
  return {
    requestsPerSec: seconds > 0 ? ok / seconds : 0,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    ok,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    seconds,
  };
}

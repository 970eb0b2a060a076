/** The send requests the bench posts. */
import type { HttpCase } from '../cases/catalog.js';
import type { LoadOptions } from '../load.js';
import { BENCH_KEY, BENCH_PROFILE, benchItems } from '../servers/host.js';

/** A quick-send body of `count` messages, their external ids starting with `prefix`. */
export function sendBody(count: number, prefix: string, callbackUrl?: string): string {
  const messages = benchItems(count, prefix);
  return JSON.stringify({ profile_code: BENCH_PROFILE, messages, ...(callbackUrl ? { dlr_callback_url: callbackUrl } : {}) });
}

/** The same body with every message scheduled `aheadSec` seconds after the load starts (Unix seconds). */
export function scheduledBody(count: number, prefix: string, aheadSec: number): string {
  const sendAt = Math.floor(Date.now() / 1000) + aheadSec;
  const messages = benchItems(count, prefix).map((item) => ({ ...item, send_at: sendAt }));
  return JSON.stringify({ profile_code: BENCH_PROFILE, messages });
}

/** The bench key's header, on every send. */
export const HEADERS = { 'x-api-key': BENCH_KEY };
/** Quick send, under the default base path. */
export const PATH = '/api/outbox/create';

/**
 * What case `c` adds to each load of its run `tag`: keys of their own (a fresh server, and the
 * warm-up's keys are not the measured part's) and its scheduled requests.
 */
export function caseLoad(c: HttpCase, tag: string): Pick<LoadOptions, 'idempotencyKeys' | 'scheduled'> {
  if (c.idempotencyKeys !== true) return {};
  const keys = { idempotencyKeys: `${c.name}-${tag}` };
  if (c.scheduleEvery === undefined) return keys;
  return { ...keys, scheduled: { body: scheduledBody(c.perRequest, `bench-${c.name}`, 60), every: c.scheduleEvery } };
}

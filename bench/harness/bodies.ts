/** The send requests the bench posts. */
import { BENCH_KEY, BENCH_PROFILE, benchItems } from '../servers/host.js';

/** A quick-send body of `count` messages, their external ids starting with `prefix`. */
export function sendBody(count: number, prefix: string, callbackUrl?: string): string {
  const messages = benchItems(count, prefix);
  return JSON.stringify({ profile_code: BENCH_PROFILE, messages, ...(callbackUrl ? { dlr_callback_url: callbackUrl } : {}) });
}

/** The bench key's header, on every send. */
export const HEADERS = { 'x-api-key': BENCH_KEY };
/** Quick send, under the default base path. */
export const PATH = '/api/outbox/create';

/**
 * The standard rate-limit headers (IETF draft-8, as express-rate-limit writes them with
 * `standardHeaders: 'draft-8'`) for the limits this package counts itself, and the wording
 * of windows in `details` texts.
 */
import { createHash } from 'node:crypto';
import type { Response } from 'express';

/** One limit's state, as the headers report it. */
export interface PolicyState {
  /** The policy's name, quoted in both headers (`"messages"`). */
  name: string;
  /** The counter's key; only a hash of it is sent (the `pk` parameter). */
  key: string;
  /** The quota per window. */
  limit: number;
  /** The window, ms. */
  windowMs: number;
  /** What is left of the quota. */
  remaining: number;
  /** Seconds until the window ends. */
  resetSeconds: number;
}

/** Seconds from now until `resetTime`, rounded up, never negative. */
export function secondsUntil(resetTime: Date): number {
  return Math.max(0, Math.ceil((resetTime.getTime() - Date.now()) / 1000));
}

/** Partition keys recently derived; the same few counter keys come back on every request. */
const partitionKeys = new Map<string, string>();
/** Entries kept at most; past it the cache starts over (a flood of addresses, say). */
const PARTITION_KEYS_KEPT = 1024;

/**
 * The `pk` parameter of `RateLimit-Policy` for a counter key: the same partition key
 * express-rate-limit derives, so one client sees one scheme. A SHA-256 per request is
 * measurable on the request path, so recent ones are kept; the keys hashed are counter keys
 * (principal ids, client addresses), never API keys.
 */
export function partitionKey(key: string): string {
  let pk = partitionKeys.get(key);
  if (pk === undefined) {
    const hex = createHash('sha256').update(key).digest('hex').slice(0, 12);
    pk = Buffer.from(hex).toString('base64');
    if (partitionKeys.size >= PARTITION_KEYS_KEPT) partitionKeys.clear();
    partitionKeys.set(key, pk);
  }
  return pk;
}

/**
 * Appends one policy to `RateLimit` and `RateLimit-Policy` (several limits each add theirs,
 * as the draft allows). With `retryAfter`, also sets `Retry-After` to the reset seconds.
 */
export function setPolicyHeaders(res: Response, state: PolicyState, retryAfter = false): void {
  if (res.headersSent) return;
  const windowSeconds = Math.ceil(state.windowMs / 1000);
  res.append('RateLimit', `"${state.name}"; r=${Math.max(0, state.remaining)}; t=${state.resetSeconds}`);
  res.append('RateLimit-Policy', `"${state.name}"; q=${state.limit}; w=${windowSeconds}; pk=:${partitionKey(state.key)}:`);
  if (retryAfter) res.setHeader('Retry-After', String(state.resetSeconds));
}

const UNITS: ReadonlyArray<[string, number]> = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1000],
];

/** A window in words: `1 minute`, `15 minutes`, `90 seconds`, `250 ms`. */
export function windowText(windowMs: number): string {
  for (const [unit, ms] of UNITS) {
    if (windowMs % ms === 0) {
      const n = windowMs / ms;
      return n === 1 ? `1 ${unit}` : `${n} ${unit}s`;
    }
  }
  return `${windowMs} ms`;
}

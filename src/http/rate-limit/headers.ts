/**
 * The standard rate-limit headers (IETF draft-8, as express-rate-limit writes them with
 * `standardHeaders: 'draft-8'`) for the limits this package counts itself, and the wording
 * of windows in `details` texts.
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { RateLimitHeaders } from './options.js';

/** Seconds from now until `resetTime` (a Date or epoch ms), rounded up, never negative. */
export function secondsUntil(resetTime: Date | number): number {
  const at = typeof resetTime === 'number' ? resetTime : resetTime.getTime();
  return Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/**
 * The `pk` parameter of `RateLimit-Policy` for a counter key: the same partition key
 * express-rate-limit derives (the first 12 hex digits of its SHA-256, base64), so one
 * client sees one scheme. The keys hashed are counter keys (principal ids, client
 * addresses), never API keys.
 */
export function partitionKey(key: string): string {
  return Buffer.from(createHash('sha256').update(key).digest('hex').slice(0, 12)).toString('base64');
}

/** Policy texts kept per writer at most; past it the cache starts over (a flood of addresses, say). */
const POLICIES_KEPT = 1024;

/**
 * Writes one limit's draft-8 headers: `RateLimit` and `RateLimit-Policy` (several limits
 * each add theirs to the same field, as the draft's list syntax allows) and, for a refusal,
 * `Retry-After`.
 *
 * These headers go out on every answer, so the writer is built for the request path: the
 * policy text (with its SHA-256 partition key) is made once per counter key and limit, and
 * the fields are added on Node's response directly, not through Express's `res.append`,
 * which reads, copies and converts the field for each call.
 */
export class PolicyHeaders {
  readonly #name: string;
  readonly #windowSeconds: number;
  readonly #always: boolean;
  readonly #policies = new Map<string, { limit: number; text: string }>();

  /**
   * `name` is the policy's name, quoted in both fields (`"messages"`); `windowMs` its window;
   * `when` says whether answers that were not refused carry the headers too.
   */
  constructor(name: string, windowMs: number, when: RateLimitHeaders) {
    this.#name = `"${name}"`;
    this.#windowSeconds = Math.ceil(windowMs / 1000);
    this.#always = when === 'always';
  }

  /**
   * Adds the policy of counter `key` (quota `limit`, `remaining` left, the window ending in
   * `resetSeconds`) to `res` when it is `refused` or the headers go on every answer; a
   * refusal also gets `Retry-After` (`resetSeconds`). Does nothing once the headers are sent.
   */
  write(res: ServerResponse, key: string, limit: number, remaining: number, resetSeconds: number, refused: boolean): void {
    if (!this.wanted(refused) || res.headersSent) return;
    // appendHeader adds a line per policy (RFC 9110 5.3: the same as one line joined with ", ").
    res.appendHeader('RateLimit', `${this.#name}; r=${remaining > 0 ? remaining : 0}; t=${resetSeconds}`);
    res.appendHeader('RateLimit-Policy', this.#policy(key, limit));
    if (refused) res.setHeader('Retry-After', String(resetSeconds));
  }

  /**
   * Replaces this policy's `RateLimit` entry, if `res` has one and is not sent yet, with
   * `remaining` left: its count changed (messages given back) before the answer went out.
   */
  rewrite(res: ServerResponse, remaining: number, resetSeconds: number): void {
    if (res.headersSent) return;
    const current = res.getHeader('RateLimit');
    if (current === undefined) return;
    const entries = (Array.isArray(current) ? current : [String(current)]).filter((entry) => !entry.startsWith(`${this.#name};`));
    if (entries.length === (Array.isArray(current) ? current.length : 1)) return;
    entries.push(`${this.#name}; r=${remaining > 0 ? remaining : 0}; t=${resetSeconds}`);
    res.setHeader('RateLimit', entries);
  }

  /**
   * Whether an answer (`refused` or not) carries this policy: callers skip working out the
   * values when it does not. Four header lines per answer cost about 5% of a one-message
   * request, so by default only refusals, which need them, carry them.
   */
  wanted(refused: boolean): boolean {
    return refused || this.#always;
  }

  #policy(key: string, limit: number): string {
    const known = this.#policies.get(key);
    if (known !== undefined && known.limit === limit) return known.text;
    const text = `${this.#name}; q=${limit}; w=${this.#windowSeconds}; pk=:${partitionKey(key)}:`;
    if (this.#policies.size >= POLICIES_KEPT) this.#policies.clear();
    this.#policies.set(key, { limit, text });
    return text;
  }
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

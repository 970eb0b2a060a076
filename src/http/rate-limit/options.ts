/**
 * The rate-limit options (`rateLimit` of `createSmsRouter`: per-key request and message
 * limits, failed-auth limits per address, and their stores), their defaults, and their
 * resolution into a complete config, checked once at construction.
 */
import type { Store } from 'express-rate-limit';
import type { Principal } from '../../auth/principal.js';
import { OptionError } from '../../errors.js';
import { assertKnownKeys, assertNumber } from '../../util/known-keys.js';
import { MemoryBudgetStore, type BudgetStore } from './budget-store.js';
import type { MemoryRateLimitStore } from './memory-windows.js';

/**
 * A per-key limit: a number for every key, or a function of the caller's principal
 * (called on every request, so keep it cheap). It must give an integer >= 0; 0 refuses all.
 */
export type PerKeyLimit = number | ((principal: Principal) => number);

/**
 * The per-key request limit, checked right after authentication on every endpoint. Every
 * request with a valid key counts, refused or not (an `Idempotency-Key` replay is given back).
 */
export interface RequestLimitOptions {
  /**
   * Requests per window per key. A principal's own `rateLimit` takes precedence.
   * Default 600 (10 a second on average).
   */
  limit?: PerKeyLimit;
  /** The window, ms. Default 60,000 (1 minute). */
  windowMs?: number;
}

/**
 * The per-key message budget: every message stored counts, a batch of N counts N; a request
 * that stores nothing (refused after the check, or failed) takes nothing from it.
 */
export interface MessageBudgetOptions {
  /**
   * Messages per window per key. A request that would go over it is refused whole: 429 when
   * the window will make room for it, 422 when it is larger than the whole budget.
   * Default 10,000 (ten full 1,000-message batches a minute).
   */
  limit?: PerKeyLimit;
  /** The window, ms. Default 60,000 (1 minute). */
  windowMs?: number;
}

/** The per-address limit on failed authentication (requests answered 401, and 403 `IP_NOT_ALLOWED`). */
export interface FailedAuthOptions {
  /**
   * Failed attempts per window per client address; once reached, the address is answered
   * 429 before its key is even looked at, valid key or not. Default 20.
   */
  limit?: number;
  /** The window, ms. Default 900,000 (15 minutes). */
  windowMs?: number;
  /**
   * IPv6 addresses are grouped by this prefix length (one customer site usually holds a
   * whole /56), as express-rate-limit's `ipKeyGenerator` does; `false` counts each address.
   * An integer from 32 to 64. Default 56. The address is `req.ip`: set Express's
   * `trust proxy` when the router sits behind a proxy.
   */
  ipv6Subnet?: number | false;
}

/** The counters kept in an express-rate-limit `Store`, one store each. */
export type RateLimitStoreName = 'requests' | 'failed-auth';

/**
 * Which answers carry the draft-8 `RateLimit` and `RateLimit-Policy` headers: only the 429s
 * of a limit (`'refused'`, with `Retry-After`), or every answer of an endpoint (`'always'`).
 */
export type RateLimitHeaders = 'refused' | 'always';

/** The `rateLimit` option of `createSmsRouter`; `false` turns every limit off. */
export interface RateLimitOptions {
  /** Requests per key, or `false` for none. Default: 600 per minute. */
  requests?: RequestLimitOptions | false;
  /** Messages per key, or `false` for none. Default: 10,000 per minute. */
  messages?: MessageBudgetOptions | false;
  /** Failed authentication per client address, or `false` for none. Default: 20 per 15 minutes. */
  failedAuth?: FailedAuthOptions | false;
  /**
   * Default `'refused'`: the headers go out with a limit's 429 (with `Retry-After`), where a
   * client needs them. `'always'` adds each limit's policy to every answer too, so clients
   * can pace themselves; it costs about 5% of a one-message request (four more header
   * lines per answer).
   */
  headers?: RateLimitHeaders;
  /**
   * Makes the express-rate-limit `Store` of one limiter; called once per limiter at
   * construction, and must return a NEW store each time (for Redis: its own `prefix`).
   * The failed-auth store must implement `get` (MemoryStore and rate-limit-redis do).
   * Default: a new {@link MemoryRateLimitStore} (counts per process, like express-rate-limit's
   * `MemoryStore`, but synchronous). For many instances:
   * `(name) => new RedisStore({ sendCommand, prefix: \`sms-outbox:${name}:\` })`.
   */
  store?: (limiter: RateLimitStoreName) => Store;
  /**
   * Where message budgets are counted. Default: a new {@link MemoryBudgetStore} (per
   * process). For many instances: `new RedisBudgetStore({ sendCommand })`.
   */
  budgetStore?: BudgetStore;
}

/** {@link RequestLimitOptions} with every default filled in. */
export interface RequestLimitConfig {
  limit: PerKeyLimit;
  windowMs: number;
}

/** {@link MessageBudgetOptions} with every default filled in. */
export interface MessageBudgetConfig {
  limit: PerKeyLimit;
  windowMs: number;
}

/** {@link FailedAuthOptions} with every default filled in. */
export interface FailedAuthConfig {
  limit: number;
  windowMs: number;
  ipv6Subnet: number | false;
}

/** {@link RateLimitOptions} with every default filled in. */
export interface RateLimitConfig {
  requests: RequestLimitConfig | false;
  messages: MessageBudgetConfig | false;
  failedAuth: FailedAuthConfig | false;
  headers: RateLimitHeaders;
  store: ((limiter: RateLimitStoreName) => Store) | null;
  budgetStore: BudgetStore;
}

/** Longest window: Node timers (and express-rate-limit's MemoryStore) take at most 2^31-1 ms. */
const MAX_WINDOW_MS = 2 ** 31 - 1;

/** The per-key request limit's defaults: 600 a minute. */
export const REQUEST_DEFAULTS: RequestLimitConfig = { limit: 600, windowMs: 60_000 };
/** The per-key message budget's defaults: 10,000 a minute. */
export const MESSAGE_DEFAULTS: MessageBudgetConfig = { limit: 10_000, windowMs: 60_000 };
/** The failed-auth limit's defaults: 20 per 15 minutes, IPv6 grouped by /56. */
export const FAILED_AUTH_DEFAULTS: FailedAuthConfig = { limit: 20, windowMs: 15 * 60_000, ipv6Subnet: 56 };
/** The default of `headers`: only a limit's 429 carries them. */
export const DEFAULT_RATE_LIMIT_HEADERS: RateLimitHeaders = 'refused';
const OPTION_KEYS = ['requests', 'messages', 'failedAuth', 'headers', 'store', 'budgetStore'] as const;

function assertWindow(where: string, value: unknown): void {
  assertNumber(where, value, 1);
  if (value > MAX_WINDOW_MS) throw new OptionError(`${where} must be at most ${MAX_WINDOW_MS} ms, got ${value}`);
}

function assertPerKeyLimit(where: string, value: unknown): void {
  if (typeof value !== 'function') assertNumber(where, value, 0);
}

function sectionOf<T extends object>(where: string, given: T | false | undefined, defaults: Required<T>): Required<T> | false {
  if (given === false) return false;
  if (given === undefined) return { ...defaults };
  if (typeof given !== 'object' || given === null) throw new OptionError(`${where} must be an object or false`);
  assertKnownKeys(where, given, Object.keys(defaults));
  // An explicit `undefined` means "the default", as everywhere else in the options.
  const defined = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
  return { ...defaults, ...defined } as Required<T>;
}

/**
 * Checks the `rateLimit` option and fills every default; `false` turns rate limiting off.
 *
 * @throws TypeError naming the bad option (with a "did you mean" hint for a typo).
 */
export function resolveRateLimitOptions(options: RateLimitOptions | false | undefined): RateLimitConfig | false {
  if (options === false) return false;
  const given = options ?? {};
  if (typeof given !== 'object' || given === null) throw new OptionError('rateLimit must be an object or false');
  assertKnownKeys('rateLimit', given, OPTION_KEYS);

  const requests = sectionOf('rateLimit.requests', given.requests, REQUEST_DEFAULTS);
  if (requests !== false) {
    assertPerKeyLimit('rateLimit.requests.limit', requests.limit);
    assertWindow('rateLimit.requests.windowMs', requests.windowMs);
  }
  const messages = sectionOf('rateLimit.messages', given.messages, MESSAGE_DEFAULTS);
  if (messages !== false) {
    assertPerKeyLimit('rateLimit.messages.limit', messages.limit);
    assertWindow('rateLimit.messages.windowMs', messages.windowMs);
  }
  const failedAuth = sectionOf('rateLimit.failedAuth', given.failedAuth, FAILED_AUTH_DEFAULTS);
  if (failedAuth !== false) {
    assertNumber('rateLimit.failedAuth.limit', failedAuth.limit, 1);
    assertWindow('rateLimit.failedAuth.windowMs', failedAuth.windowMs);
    if (failedAuth.ipv6Subnet !== false) {
      assertNumber('rateLimit.failedAuth.ipv6Subnet', failedAuth.ipv6Subnet, 32);
      if (failedAuth.ipv6Subnet > 64) {
        throw new OptionError(`rateLimit.failedAuth.ipv6Subnet must be at most 64 (or false), got ${failedAuth.ipv6Subnet}`);
      }
    }
  }
  if (given.store !== undefined && typeof given.store !== 'function') {
    throw new OptionError('rateLimit.store must be a function (limiter name) => a new express-rate-limit Store');
  }
  const budgetStore = given.budgetStore ?? new MemoryBudgetStore();
  if (typeof budgetStore !== 'object' || budgetStore === null || typeof budgetStore.take !== 'function') {
    throw new OptionError('rateLimit.budgetStore must be a BudgetStore (an object with a `take` method)');
  }
  const headers = given.headers ?? DEFAULT_RATE_LIMIT_HEADERS;
  if (headers !== 'refused' && headers !== 'always') {
    throw new OptionError(`rateLimit.headers must be 'refused' or 'always', got ${JSON.stringify(headers)}`);
  }
  return { requests, messages, failedAuth, headers, store: given.store ?? null, budgetStore };
}

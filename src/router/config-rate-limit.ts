/**
 * Resolves the `rateLimit` option (per-key request and message limits, failed-auth limits
 * per address, and their stores) into a complete config, checked once at construction.
 */
import { MemoryBudgetStore } from '../http/rate-limit/budget-store.js';
import type {
  FailedAuthConfig,
  MessageBudgetConfig,
  RateLimitConfig,
  RateLimitOptions,
  RequestLimitConfig,
} from '../http/rate-limit/options.js';
import { assertKnownKeys, assertNumber } from '../util/known-keys.js';
import { OptionError } from '../errors.js';

/** Longest window: Node timers (and express-rate-limit's MemoryStore) take at most 2^31-1 ms. */
const MAX_WINDOW_MS = 2 ** 31 - 1;

const REQUEST_DEFAULTS: RequestLimitConfig = { limit: 600, windowMs: 60_000 };
const MESSAGE_DEFAULTS: MessageBudgetConfig = { limit: 10_000, windowMs: 60_000 };
const FAILED_AUTH_DEFAULTS: FailedAuthConfig = { limit: 20, windowMs: 15 * 60_000, ipv6Subnet: 56 };
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
  const headers = given.headers ?? 'refused';
  if (headers !== 'refused' && headers !== 'always') {
    throw new OptionError(`rateLimit.headers must be 'refused' or 'always', got ${JSON.stringify(headers)}`);
  }
  return { requests, messages, failedAuth, headers, store: given.store ?? null, budgetStore };
}

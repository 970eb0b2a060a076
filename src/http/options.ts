/**
 * The HTTP layer's options: the bounds on one request (`limits`), on queued messages
 * (`backlog`), the `Idempotency-Key` window (`idempotency`) and what a request costs
 * (`credit`), how spend caps count (`spendCaps`), and who answers an unexpected error
 * (`serverErrors`); their defaults, and their resolution, checked once at construction so
 * a mistake fails there, not at the first request. The rate limits have their own
 * (rate-limit/options.ts).
 */
import { OptionError } from '../errors.js';
import type { CreditLine, CreditRefundCause } from '../observe/credit-events.js';
import type { RefundPolicy } from '../lifecycle/credit.js';
import type { Storage } from '../storage/contract.js';
import { describeType } from '../util/adapter-check.js';
import { assertKnownKeys, resolveIntegerSection } from '../util/known-keys.js';
import { assertTimeZone } from '../numbers/quiet-hours.js';
import type { SpendCapsConfig } from './spend-caps.js';

/** Bounds on what one request may carry. */
export interface LimitOptions {
  /** Largest accepted body, in bytes; larger answers 413. Default 1 MiB (1,048,576). */
  maxBodyBytes?: number;
  /** Most messages (or `to` numbers) in one request; more answers 422. Default 1000. */
  maxMessagesPerRequest?: number;
  /** Most SMS units one message may need; more answers 422. Default 10. */
  maxSegments?: number;
}

/** The default request bounds (also what the OpenAPI document states when given none). */
export const LIMIT_DEFAULTS: Readonly<Required<LimitOptions>> = {
  maxBodyBytes: 1024 * 1024,
  maxMessagesPerRequest: 1000,
  maxSegments: 10,
};

/** Checks the `limits` option and fills its defaults. */
export function resolveLimitOptions(given: LimitOptions | undefined): Required<LimitOptions> {
  return resolveIntegerSection('limits', given, LIMIT_DEFAULTS);
}

/** The `backlog` option: bounds on queued messages (accepted, not yet submitted). */
export interface BacklogOptions {
  /** Most queued messages per key; more answers 429. A principal's `maxQueued` overrides it. Default 100,000. */
  perKey?: number;
  /** Most queued messages in all; more answers 503. Default 1,000,000. */
  total?: number;
  /** How old a count may be before it is read again from storage, ms. Default 1,000. */
  refreshMs?: number;
}

/** The backlog defaults. */
export const BACKLOG_DEFAULTS: Readonly<Required<BacklogOptions>> = {
  perKey: 100_000,
  total: 1_000_000,
  refreshMs: 1_000,
};

/** Checks the `backlog` option and fills its defaults; `false` turns the bounds off. */
export function resolveBacklogOptions(given: BacklogOptions | false | undefined): Required<BacklogOptions> | false {
  return given === false ? false : resolveIntegerSection('backlog', given, BACKLOG_DEFAULTS);
}

/** How long a key holds its answer. */
export interface IdempotencyOptions {
  /**
   * How long after a request was accepted its `Idempotency-Key` replays its answer, ms; then
   * the key is free again, and its record is swept with the retention work. Default 24 hours.
   */
  ttlMs?: number;
}

/** The idempotency defaults. */
export const IDEMPOTENCY_DEFAULTS: Required<IdempotencyOptions> = {
  ttlMs: 24 * 3600_000,
};

/** Checks the `idempotency` option and fills its defaults. */
export function resolveIdempotencyOptions(given: IdempotencyOptions | undefined): Required<IdempotencyOptions> {
  return resolveIntegerSection('idempotency', given, IDEMPOTENCY_DEFAULTS);
}

/** A request's charge, as the host's {@link CreditHook} is asked for it. */
export interface CreditRequest {
  /** Whose credit pays (the API key's principal). */
  principalId: string;
  /** The request's profile. */
  profileCode: string;
  /** The units asked for: the sum of `messages`' units. */
  units: number;
  /** Each message, in request order, with its `message_ref`: the key a charge is idempotent by. */
  messages: CreditLine[];
}

/** Units given back, as the host's {@link CreditHook} is told. */
export interface CreditRefund {
  /** Whose credit gets them. */
  principalId: string;
  /** The units: the sum of `messages`' units. */
  units: number;
  /** The messages they were taken for, by `message_ref`: the key a refund is idempotent by. */
  messages: CreditLine[];
  /** Why (see `CreditRefundCause`). */
  cause: CreditRefundCause;
}

/**
 * A host's own ledger (balances kept elsewhere: a billing service, an account database).
 * Both calls must be idempotent by message ref: a retry of a failed call (or of a request)
 * names the same refs, and a ref is never charged or refunded twice by the router.
 */
export interface CreditHook {
  /** Takes `request.units`; resolves `false` to refuse (402, nothing stored). A throw is a 500. */
  charge(request: CreditRequest): boolean | Promise<boolean>;
  /** Gives units back; a throw is reported as an `error` event (source `credit`) and not retried. */
  refund(refund: CreditRefund): void | Promise<void>;
}

/** The `credit` option. */
export interface CreditOptions {
  /**
   * Where balances live: `'storage'` for the ledger the storage keeps (the bundled storages
   * have one; balances are topped up with `router.credit.topUp`), or the host's
   * {@link CreditHook}. Required.
   */
  ledger: 'storage' | CreditHook;
  /**
   * Which ended messages give their units back: `'unsent'` (those that never reached the
   * carrier: refused by its route, opted out, validity elapsed, cancelled, out of attempts),
   * or `'unsent-and-failed'` (those, and every message the carrier took that ends other than
   * delivered). Default `'unsent'`.
   */
  refunds?: RefundPolicy;
}

/** The resolved `credit` option. */
export interface CreditConfig {
  ledger: 'storage' | CreditHook;
  refunds: RefundPolicy;
}

/** The default of `credit.refunds`: only messages that never reached the carrier are refunded. */
export const DEFAULT_REFUND_POLICY: RefundPolicy = 'unsent';

const REFUND_POLICIES: readonly RefundPolicy[] = ['unsent', 'unsent-and-failed'];

/** Checks the `credit` option against `storage`; `null` when it is not given. */
export function resolveCreditOptions(given: CreditOptions | undefined, storage: Storage): CreditConfig | null {
  if (given === undefined) return null;
  const where = 'createSmsRouter: `credit`';
  if (typeof given !== 'object' || given === null) throw new OptionError(`${where} must be an object { ledger, refunds? }`);
  assertKnownKeys('credit', given, ['ledger', 'refunds']);
  const { ledger, refunds = DEFAULT_REFUND_POLICY } = given;
  if (!REFUND_POLICIES.includes(refunds)) throw new OptionError(`${where}.refunds must be 'unsent' or 'unsent-and-failed'`);
  if (ledger === 'storage') {
    if (typeof storage.topUpCredit !== 'function' || typeof storage.creditBalance !== 'function') {
      throw new OptionError(`${where}.ledger is 'storage', but the storage has no credit ledger (topUpCredit, creditBalance)`, 'INVALID_ADAPTER');
    }
  } else if (typeof ledger !== 'object' || ledger === null || typeof ledger.charge !== 'function' || typeof ledger.refund !== 'function') {
    throw new OptionError(`${where}.ledger must be 'storage' or an object with charge() and refund()`, 'INVALID_ADAPTER');
  }
  return { ledger, refunds };
}

/** The `spendCaps` option: how the principals' `dailyUnits` and `monthlyUnits` count. */
export interface SpendCapsOptions {
  /**
   * The IANA time zone (`Africa/Nairobi`) whose midnight ends a day's count, and whose first
   * of the month a month's. Default `'UTC'`.
   */
  timeZone?: string;
}

/** Checks the `spendCaps` option and fills its default. */
export function resolveSpendCapsOptions(given: SpendCapsOptions | undefined): SpendCapsConfig {
  if (given === undefined) return { timeZone: 'UTC' };
  if (typeof given !== 'object' || given === null) throw new OptionError(`createSmsRouter: \`spendCaps\` must be an object { timeZone? }, got ${describeType(given)}`);
  assertKnownKeys('spendCaps', given, ['timeZone']);
  const { timeZone = 'UTC' } = given;
  assertTimeZone('createSmsRouter: `spendCaps`', timeZone);
  return { timeZone };
}

/**
 * Who answers a request that failed unexpectedly (a storage that threw, a bug), never a
 * refusal of the registry, which the router always answers itself:
 *
 * - `'answer'`: the router answers `500 { "details": "500 server-error", "code": "SERVER_ERROR" }`.
 * - `'next'`: the router answers nothing and passes the error to `next(error)`, so the host's
 *   error middleware (and an APM agent hooked into it) sees it and answers.
 *
 * The `error` event hears of it either way.
 */
export type ServerErrorsOption = 'answer' | 'next';

/**
 * `'answer'`: a client gets the registry's JSON whatever the host has mounted. A host
 * without error middleware of its own would otherwise answer with Express's default page
 * (HTML, with the stack trace outside production).
 */
export const SERVER_ERRORS_DEFAULT: ServerErrorsOption = 'answer';

/** Checks the `serverErrors` option and fills its default. */
export function resolveServerErrors(given: unknown): ServerErrorsOption {
  if (given === undefined) return SERVER_ERRORS_DEFAULT;
  if (given === 'answer' || given === 'next') return given;
  const got = typeof given === 'string' ? `"${given}"` : describeType(given);
  throw new OptionError(`createSmsRouter: \`serverErrors\` must be 'answer' or 'next', got ${got}`);
}

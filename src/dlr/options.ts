/**
 * The delivery report options (`dlr`): the public options, their defaults, and their
 * resolution into a complete config, checked once at construction so a typo fails there,
 * not at the first report.
 */
import type { LookupAddress } from 'node:dns';
import { OptionError } from '../errors.js';
import { assertKnownKeys } from '../util/known-keys.js';
import { VERSION } from '../version.js';
import { compileAllowList, type AddressAllowance } from './address-guard.js';
import { signingKey } from './sign.js';

/** The `user-agent` every report is sent with. */
export const USER_AGENT = `sms-outbox/${VERSION}`;

/** Resolves a host name to its addresses (all of them), as `dns.lookup` with `all: true` does. */
export type HostResolver = (hostname: string) => Promise<readonly LookupAddress[]>;

/**
 * The default schedule (ms): the delay before each attempt, counted from the end of the
 * previous one. Eight attempts over about 28 hours: at once, 5 s, 5 min, 30 min, 2 h, 5 h,
 * 10 h, 10 h.
 */
export const DEFAULT_SCHEDULE: readonly number[] = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** Default total time an attempt may take: connect, request, headers and body. */
export const DEFAULT_TIMEOUT_MS = 15_000;

/** Default attempts in flight at once, over all receivers. */
export const DEFAULT_CONCURRENCY = 64;

/** Default attempts in flight at once to one receiver host. */
export const DEFAULT_PER_HOST_CONCURRENCY = 8;

/** Default interval between asks for due reports, ms. */
export const DEFAULT_POLL_INTERVAL_MS = 500;

/** The default claim lease for an attempt timeout: one attempt waiting for its host plus its own. */
export function defaultLeaseMs(timeoutMs: number): number {
  return 2 * timeoutMs + 5_000;
}

/** How delivery reports (DLR callbacks) are sent. Every field is optional. */
export interface DlrOptions {
  /**
   * The signing secret for reports whose message has no `callbackSecret` of its own (a
   * per-message secret wins). `whsec_<base64>` is the Standard Webhooks form; any other
   * string is used as raw UTF-8 bytes. Default: none, reports are sent unsigned.
   */
  secret?: string;
  /**
   * Delay before each attempt, ms, counted from the end of the previous one; its length
   * is the number of attempts. The first entry must be 0 (the first attempt is made as
   * soon as the message is terminal). Each later delay is spread by +-10% and stretched to
   * a longer `Retry-After`. Default: `[0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h]`.
   */
  schedule?: readonly number[];
  /** Total time one attempt may take (connect, send, headers, body), ms. Default 15000. */
  timeoutMs?: number;
  /** Attempts in flight at once, over all receivers. Default 64. */
  concurrency?: number;
  /** Attempts in flight at once to one receiver host, so a slow one cannot take every slot. Default 8. */
  perHostConcurrency?: number;
  /**
   * Whether reports may go to private, loopback, link-local or other internal addresses:
   * `true` (all), `false` (none), or a list of IPs and CIDR ranges that are allowed, such as
   * `['127.0.0.0/8', '::1/128']`. For development and tests. Default `false`.
   */
  allowPrivateAddresses?: boolean | readonly string[];
  /** How often storage is asked for due reports, ms. Default 500. */
  pollIntervalMs?: number;
  /**
   * How long a claimed report is reserved for this instance, ms; after that another
   * instance (or this one, after a restart) may send it. Must exceed `timeoutMs`.
   * Default `2 * timeoutMs + 5000`: one attempt waiting for its host plus its own.
   */
  leaseMs?: number;
  /** At most this many reports are claimed per storage call. Default `concurrency`. */
  batchSize?: number;
  /**
   * A callback URL whose every attempt failed for this long (since its last success, as this
   * instance saw it) is paused: its reports fail without a request, `callback.endpoint_paused`
   * is emitted, until a replay of its principal's reports or `router.callbacks.resume(url)`
   * (docs/callbacks.md). `Infinity`: never paused. Default 5 days.
   */
  pauseAfterMs?: number;
}

/** {@link DlrOptions} resolved: every field present and checked. Internal. */
export interface DlrConfig {
  /** Global signing secret, or `null`. */
  secret: string | null;
  /** Delays before each attempt, ms; `schedule[0]` is 0. */
  schedule: readonly number[];
  /** Total time per attempt, ms. */
  timeoutMs: number;
  /** Attempts in flight overall. */
  concurrency: number;
  /** Attempts in flight per host. */
  perHostConcurrency: number;
  /** Which internal addresses are allowed. */
  allowance: AddressAllowance;
  /** Poll interval, ms. */
  pollIntervalMs: number;
  /** Claim lease, ms. */
  leaseMs: number;
  /** Claim batch size. */
  batchSize: number;
  /** How long a callback URL fails before it is paused, ms (`Infinity`: never). */
  pauseAfterMs: number;
  /** The `user-agent` sent. */
  userAgent: string;
  /** How host names are resolved; `undefined` means `dns.lookup`. Not a public option. */
  resolve?: HostResolver;
}

const KEYS = [
  'secret',
  'schedule',
  'timeoutMs',
  'concurrency',
  'perHostConcurrency',
  'allowPrivateAddresses',
  'pollIntervalMs',
  'leaseMs',
  'batchSize',
  'pauseAfterMs',
] as const satisfies readonly (keyof DlrOptions)[];

function integer(name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new OptionError(`dlr.${name} must be an integer of at least ${min}, got ${String(value)}`);
  }
  return value;
}

function schedule(value: unknown): readonly number[] {
  if (value === undefined) return DEFAULT_SCHEDULE;
  if (!Array.isArray(value) || value.length === 0) {
    throw new OptionError('dlr.schedule must be a non-empty array of delays in ms');
  }
  value.forEach((delay: unknown, i) => {
    if (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0) {
      throw new OptionError(`dlr.schedule[${i}] must be a delay in ms (a number of at least 0), got ${String(delay)}`);
    }
  });
  if (value[0] !== 0) {
    throw new OptionError('dlr.schedule[0] must be 0: the first attempt is made as soon as the message is terminal');
  }
  return Object.freeze([...(value as number[])]);
}

function allowance(value: unknown): AddressAllowance {
  if (value === undefined) return { allowPrivate: false };
  if (typeof value === 'boolean') return { allowPrivate: value };
  if (!Array.isArray(value)) {
    throw new OptionError('dlr.allowPrivateAddresses must be true, false or a list of IPs and CIDR ranges');
  }
  const list = Object.freeze([...(value as string[])]);
  compileAllowList(list);
  return { allowPrivate: list };
}

/** The default of `pauseAfterMs`: 5 days. */
export const DEFAULT_PAUSE_AFTER_MS = 5 * 86_400_000;

/** `pauseAfterMs`: a positive number of ms, or `Infinity`. */
function pauseAfter(value: unknown): number {
  if (value === undefined) return DEFAULT_PAUSE_AFTER_MS;
  if (typeof value !== 'number' || Number.isNaN(value) || value < 1) {
    throw new OptionError(`dlr.pauseAfterMs must be a number of ms of at least 1 (Infinity: never pause), got ${String(value)}`);
  }
  return value;
}

/**
 * Resolves {@link DlrOptions} into a {@link DlrConfig}, filling defaults. Throws a
 * `TypeError` that names the option for an unknown key (with a "did you mean" hint), a
 * value of the wrong type or range, a bad secret, or a lease not longer than the timeout.
 */
export function resolveDlrOptions(options: DlrOptions = {}): DlrConfig {
  if (typeof options !== 'object' || options === null) throw new OptionError('dlr options must be an object');
  assertKnownKeys('dlr', options, KEYS);
  let secret: string | null = null;
  if (options.secret !== undefined) {
    if (typeof options.secret !== 'string') throw new OptionError('dlr.secret must be a string');
    try {
      signingKey(options.secret);
    } catch (error) {
      throw new OptionError(`dlr.secret: ${(error as Error).message}`);
    }
    secret = options.secret;
  }
  const timeoutMs = integer('timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS, 1);
  const concurrency = integer('concurrency', options.concurrency, DEFAULT_CONCURRENCY, 1);
  const perHostConcurrency = integer('perHostConcurrency', options.perHostConcurrency, DEFAULT_PER_HOST_CONCURRENCY, 1);
  const leaseMs = integer('leaseMs', options.leaseMs, defaultLeaseMs(timeoutMs), 1);
  if (leaseMs <= timeoutMs) {
    throw new OptionError(`dlr.leaseMs (${leaseMs}) must be longer than dlr.timeoutMs (${timeoutMs})`);
  }
  return {
    secret,
    schedule: schedule(options.schedule),
    timeoutMs,
    concurrency,
    perHostConcurrency: Math.min(perHostConcurrency, concurrency),
    allowance: allowance(options.allowPrivateAddresses),
    pollIntervalMs: integer('pollIntervalMs', options.pollIntervalMs, DEFAULT_POLL_INTERVAL_MS, 1),
    leaseMs,
    batchSize: integer('batchSize', options.batchSize, concurrency, 1),
    pauseAfterMs: pauseAfter(options.pauseAfterMs),
    userAgent: USER_AGENT,
  };
}

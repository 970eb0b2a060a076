/**
 * The router's public options, and `resolveOptions`, which checks them once at
 * construction and fills every default, so the rest of the code reads a complete config.
 */
import { randomUUID } from 'node:crypto';
import type { KeyVerifier } from './auth/principal.js';
import { principalProfiles, staticProfiles, type ProfileResolver } from './auth/profiles.js';
import { staticKeys } from './auth/static-keys.js';
import { assertAdapter, describeType, type MethodTable } from './util/adapter-check.js';
import type { Storage } from './storage/contract.js';
import { MemoryStorage } from './storage/memory/adapter.js';
import type { DeliveryAdapter } from './delivery/contract.js';
import { SimulatorDelivery } from './delivery/simulator.js';
import { resolveDlrOptions, type DlrConfig, type DlrOptions } from './dlr/options.js';
import { assertKnownKeys, assertNumber } from './util/known-keys.js';
import { resolveLogger, type SmsLogger } from './logging.js';
import { resolveMetrics, type MetricsConfig, type MetricsOptions } from './metrics.js';
import { resolveRateLimitOptions, type RateLimitConfig, type RateLimitOptions } from './http/rate-limit/options.js';

/** Bounds on what one request may carry. */
export interface LimitOptions {
  /** Largest accepted body, in bytes; larger answers 413. Default 1 MiB (1,048,576). */
  maxBodyBytes?: number;
  /** Most messages (or `to` numbers) in one request; more answers 422. Default 1000. */
  maxMessagesPerRequest?: number;
  /** Most SMS units one message may need; more answers 422. Default 10. */
  maxSegments?: number;
}

/** How the submission worker runs. */
export interface WorkerOptions {
  /**
   * Submissions waiting for the carrier at once, per instance. Default 64. The worker holds up
   * to 4 times as many messages (claimed ahead, waiting for a slot, or being recorded); a
   * request whose messages all fit in that room is handed to the worker without a claim.
   */
  concurrency?: number;
  /** How often an idle worker looks for due work, ms. Default 250. */
  pollIntervalMs?: number;
  /** How long a claim (or the lease a message is accepted under) holds before another instance may take the message, ms. Default 60,000. */
  leaseMs?: number;
  /** Submission attempts before a message ends `failed`. Default 10. */
  maxAttempts?: number;
  /** First retry delay after a retryable carrier error, ms; doubles each time. Default 1,000. */
  retryBaseMs?: number;
  /** Longest retry delay, ms. Default 600,000 (10 minutes). */
  retryMaxMs?: number;
  /**
   * How long a receipt whose carrier id is not (yet) known is kept and tried again, ms: a
   * receipt can overtake the recording of its own submission. Default 60,000.
   */
  receiptWaitMs?: number;
  /**
   * How long a `submitted` message waits for its carrier receipts before it ends `expired`
   * (reason `unknown`) and its report is sent, ms. Default 172,800,000 (48 hours, a common
   * SMSC validity period).
   */
  receiptTimeoutMs?: number;
}

/** How terminal messages are purged so storage does not grow without end. */
export interface RetentionOptions {
  /** Terminal messages last changed longer ago than this are deleted, ms. Default 30 days. */
  maxAgeMs?: number;
  /** How often to purge, ms. Default 1 hour. */
  intervalMs?: number;
  /** Most messages deleted per storage call (a purge loops until done). Default 1000. */
  batchSize?: number;
}

/** Options of {@link createSmsRouter}. Only `verifyKey` is required. */
export interface SmsRouterOptions {
  /** Maps an `X-API-Key` to its principal (see `staticKeys`). Required. */
  verifyKey: KeyVerifier;
  /** Finds a principal's profile by `profile_code`. Default: the principal's `profiles` list. */
  resolveProfile?: ProfileResolver;
  /**
   * Where messages live. Default: a new `MemoryStorage` (lost on restart; one process).
   * Checked at construction: every required method of `Storage` must be there; `null` is
   * refused (leave the option out for the default).
   */
  storage?: Storage;
  /**
   * How messages reach the carrier. Default: a new `SimulatorDelivery` (a fake carrier).
   * Checked like `storage`.
   */
  delivery?: DeliveryAdapter;
  /**
   * Path prefix of the endpoints, relative to where the router is mounted: literal segments
   * of letters, digits and `. _ ~ -`, matched case-sensitively, `''` for none. Default `/api/outbox`.
   */
  basePath?: string;
  /** Request bounds. */
  limits?: LimitOptions;
  /** Submission worker settings. */
  worker?: WorkerOptions;
  /** Delivery report (callback) settings: signing, retries, address policy. */
  dlr?: DlrOptions;
  /** Purging of old terminal messages, or `false` to keep everything. */
  retention?: RetentionOptions | false;
  /**
   * Request and message limits per key, failed-auth limits per address, and their stores;
   * `false` turns them all off. Default: all on, counted in memory (see `RateLimitOptions`).
   */
  rateLimit?: RateLimitOptions | false;
  /** Serves the OpenAPI document at `<basePath>/openapi.json` (no key needed); `false` turns it off. Default `true`. */
  openapi?: boolean;
  /** Logs every event on a pino-style logger (`info`, `warn`, `error`, `debug?`). Default: none, nothing is logged. */
  logger?: SmsLogger;
  /**
   * Prometheus metrics (`sms_outbox_*`) from the events: `{ client }` where `client` is the
   * host's prom-client module (`import * as client from 'prom-client'`), and optionally
   * `registry` (default: prom-client's default registry). Default: none, prom-client not needed.
   */
  metrics?: MetricsOptions;
  /** This instance's id, used as the lease owner. Default: a random UUID. */
  instanceId?: string;
  /** The clock, epoch ms. For tests. Default `Date.now`. */
  now?: () => number;
}

/** {@link SmsRouterOptions} with every default filled in. */
export interface SmsRouterConfig {
  verifyKey: KeyVerifier;
  resolveProfile: ProfileResolver;
  storage: Storage;
  delivery: DeliveryAdapter;
  basePath: string;
  limits: Required<LimitOptions>;
  worker: Required<WorkerOptions>;
  dlr: DlrConfig;
  retention: Required<RetentionOptions> | false;
  rateLimit: RateLimitConfig | false;
  openapi: boolean;
  logger: SmsLogger | null;
  metrics: MetricsConfig | null;
  instanceId: string;
  now: () => number;
}

const OPTION_KEYS = [
  'verifyKey', 'resolveProfile', 'storage', 'delivery', 'basePath', 'limits',
  'worker', 'dlr', 'retention', 'rateLimit', 'openapi', 'logger', 'metrics', 'instanceId', 'now',
] as const;

/** The default request bounds (also what the OpenAPI document states when given none). */
export const LIMIT_DEFAULTS: Readonly<Required<LimitOptions>> = {
  maxBodyBytes: 1024 * 1024,
  maxMessagesPerRequest: 1000,
  maxSegments: 10,
};

const WORKER_DEFAULTS: Required<WorkerOptions> = {
  concurrency: 64,
  pollIntervalMs: 250,
  leaseMs: 60_000,
  maxAttempts: 10,
  retryBaseMs: 1_000,
  retryMaxMs: 600_000,
  receiptWaitMs: 60_000,
  receiptTimeoutMs: 48 * 3600_000,
};

const RETENTION_DEFAULTS: Required<RetentionOptions> = {
  maxAgeMs: 30 * 24 * 3600_000,
  intervalMs: 3600_000,
  batchSize: 1000,
};

/** The {@link Storage} contract's methods (`true`: required), checked at construction. */
const STORAGE_METHODS = {
  ready: false,
  close: false,
  insertMessages: true,
  claimMessages: true,
  recordSubmission: true,
  reschedule: true,
  finish: true,
  expireOverdue: true,
  applyReceipt: true,
  getMessage: true,
  findByExternalId: true,
  claimCallbacks: true,
  deferCallbacks: true,
  recordCallbackAttempt: true,
  purge: true,
} as const satisfies MethodTable<Storage>;

/** The {@link DeliveryAdapter} contract's methods, checked at construction. */
const DELIVERY_METHODS = { start: true, submit: true, close: true } as const satisfies MethodTable<DeliveryAdapter>;

/**
 * An optional adapter: `undefined` means the default. `null` is refused rather than read as
 * "the default": the defaults are an in-memory store (lost on restart) and a fake carrier
 * (nothing reaches a phone), and a `null` here is most often a factory or a configuration
 * lookup that failed. Falling back silently would run a production gateway on them.
 */
function adapter<T>(name: string, given: T | undefined, fallback: string, check: (where: string, value: unknown) => void): T | undefined {
  const where = `createSmsRouter: \`${name}\``;
  if (given === undefined) return undefined;
  if (given === null) {
    throw new TypeError(`${where} is null; leave it out to get the default (${fallback}), or pass one`);
  }
  check(where, given);
  return given;
}

function section<T extends object>(where: string, given: T | undefined, defaults: Required<T>): Required<T> {
  if (given === undefined) return { ...defaults };
  if (typeof given !== 'object' || given === null) throw new TypeError(`${where} must be an object`);
  assertKnownKeys(where, given, Object.keys(defaults));
  const merged = { ...defaults, ...given } as Required<T>;
  for (const [key, value] of Object.entries(merged)) assertNumber(`${where}.${key}`, value, 1);
  return merged;
}

/**
 * Checks `options` and fills every default. Throws a TypeError naming the bad option (with
 * a "did you mean" hint for a typo) so mistakes surface at start-up, not at the first request.
 * Adapters are checked for the methods of their contract (see util/adapter-check.ts).
 */
export function resolveOptions(options: SmsRouterOptions): SmsRouterConfig {
  if (typeof options !== 'object' || options === null) throw new TypeError('createSmsRouter: options are required');
  assertKnownKeys('createSmsRouter', options, OPTION_KEYS);
  if (typeof options.verifyKey !== 'function') {
    const got = options.verifyKey === undefined ? '' : `, got ${describeType(options.verifyKey)}`;
    throw new TypeError(`createSmsRouter: \`verifyKey\` is required (a function, e.g. staticKeys([...]))${got}`);
  }
  // The factories are functions too, so they would pass the check above and then fail
  // every request (called with the API key instead of their table).
  if ((options.verifyKey as unknown) === staticKeys) {
    throw new TypeError('createSmsRouter: `verifyKey` is the factory staticKeys itself: did you mean staticKeys([...])?');
  }
  const resolveProfile = adapter('resolveProfile', options.resolveProfile, "the principal's `profiles` list", (where, value) => {
    if (typeof value !== 'function') {
      throw new TypeError(`${where} must be a function (code, principal) => Profile | null, got ${describeType(value)}`);
    }
    if (value === staticProfiles) throw new TypeError(`${where} is the factory staticProfiles itself: did you mean staticProfiles([...])?`);
  });
  const storage = adapter('storage', options.storage, 'new MemoryStorage(), lost on restart', (where, value) =>
    assertAdapter(where, value, STORAGE_METHODS, 'Storage'),
  );
  const delivery = adapter('delivery', options.delivery, 'new SimulatorDelivery(), a fake carrier', (where, value) =>
    assertAdapter(where, value, DELIVERY_METHODS, 'DeliveryAdapter'),
  );
  if (options.openapi !== undefined && typeof options.openapi !== 'boolean') {
    throw new TypeError('createSmsRouter: `openapi` must be true or false');
  }
  const basePath = (options.basePath ?? '/api/outbox').replace(/\/+$/, '');
  if (basePath !== '' && !basePath.startsWith('/')) {
    throw new TypeError(`createSmsRouter: \`basePath\` must start with "/", got "${basePath}"`);
  }
  // Written into Express route patterns, where `:`, `*`, `{` and the like mean parameters:
  // a base path is literal segments of URL-safe characters.
  if (!/^(\/[A-Za-z0-9._~-]+)*$/.test(basePath)) {
    throw new TypeError(`createSmsRouter: \`basePath\` must be "/"-separated segments of letters, digits and . _ ~ -, got "${basePath}"`);
  }
  return {
    verifyKey: options.verifyKey,
    resolveProfile: resolveProfile ?? principalProfiles,
    storage: storage ?? new MemoryStorage(),
    delivery: delivery ?? new SimulatorDelivery(),
    basePath,
    limits: section('limits', options.limits, LIMIT_DEFAULTS),
    worker: section('worker', options.worker, WORKER_DEFAULTS),
    dlr: resolveDlrOptions(options.dlr),
    retention: options.retention === false ? false : section('retention', options.retention, RETENTION_DEFAULTS),
    rateLimit: resolveRateLimitOptions(options.rateLimit),
    openapi: options.openapi ?? true,
    logger: resolveLogger(options.logger),
    metrics: resolveMetrics(options.metrics),
    instanceId: options.instanceId ?? randomUUID(),
    now: options.now ?? Date.now,
  };
}

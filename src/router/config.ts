/**
 * `resolveOptions`: checks the router's options once, at construction, and fills every
 * default, so the rest of the code reads a complete config. Every option of the router is
 * resolved from here (the report and rate-limit sections in their files beside this one);
 * a mistake throws an {@link OptionError} naming the option, with a "did you mean" hint
 * for a typo, at start-up rather than at the first request.
 */
import { randomUUID } from 'node:crypto';
import { principalProfiles, staticProfiles } from '../auth/profiles.js';
import { staticKeys } from '../auth/static-keys.js';
import type { DeliveryAdapter } from '../delivery/contract.js';
import { SimulatorDelivery } from '../delivery/simulator.js';
import { BACKLOG_DEFAULTS } from '../http/backlog.js';
import { resolveCreditOptions } from '../http/credit.js';
import { IDEMPOTENCY_DEFAULTS } from '../http/idempotency.js';
import { LIMIT_DEFAULTS } from '../http/limits.js';
import { resolveServerErrors } from '../http/options.js';
import type { Storage } from '../storage/contract.js';
import { MemoryStorage } from '../storage/memory/adapter.js';
import { assertAdapter, describeType, type MethodTable } from '../util/adapter-check.js';
import { assertKnownKeys, assertNumber } from '../util/known-keys.js';
import { RETENTION_DEFAULTS } from '../worker/retention.js';
import { WORKER_DEFAULTS } from '../worker/options.js';
import { resolveDlrOptions } from './config-dlr.js';
import { resolveInboundOptions } from './config-inbound.js';
import { INBOUND_METHODS } from '../storage/inbound-record.js';
import { OPTIONAL_STORAGE_METHODS } from '../storage/optional-methods.js';
import { resolveLogger, resolveMetrics } from './config-observe.js';
import { resolveOpenApiOptions } from './config-openapi.js';
import { resolveRateLimitOptions } from './config-rate-limit.js';
import type { SmsRouterConfig, SmsRouterOptions } from './options.js';
import { OptionError } from '../errors.js';

const OPTION_KEYS = [
  'verifyKey', 'resolveProfile', 'storage', 'delivery', 'basePath', 'limits',
  'worker', 'backlog', 'dlr', 'inbound', 'retention', 'idempotency', 'credit', 'rateLimit', 'openapi', 'serverErrors', 'logger', 'metrics', 'instanceId', 'now',
] as const;

/** The {@link Storage} contract's methods (`true`: required), checked at construction. */
const STORAGE_METHODS = {
  ready: false,
  close: false,
  ...(Object.fromEntries(OPTIONAL_STORAGE_METHODS.map((name) => [name, false])) as Record<(typeof OPTIONAL_STORAGE_METHODS)[number], false>),
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
    throw new OptionError(`${where} is null; leave it out to get the default (${fallback}), or pass one`, 'INVALID_ADAPTER');
  }
  check(where, given);
  return given;
}

function section<T extends object>(where: string, given: T | undefined, defaults: Required<T>): Required<T> {
  if (given === undefined) return { ...defaults };
  if (typeof given !== 'object' || given === null) throw new OptionError(`${where} must be an object`);
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
  if (typeof options !== 'object' || options === null) throw new OptionError('createSmsRouter: options are required');
  assertKnownKeys('createSmsRouter', options, OPTION_KEYS);
  if (typeof options.verifyKey !== 'function') {
    const got = options.verifyKey === undefined ? '' : `, got ${describeType(options.verifyKey)}`;
    throw new OptionError(`createSmsRouter: \`verifyKey\` is required (a function, e.g. staticKeys([...]))${got}`, 'INVALID_ADAPTER');
  }
  // The factories are functions too, so they would pass the check above and then fail
  // every request (called with the API key instead of their table).
  if ((options.verifyKey as unknown) === staticKeys) {
    throw new OptionError('createSmsRouter: `verifyKey` is the factory staticKeys itself: did you mean staticKeys([...])?', 'INVALID_ADAPTER');
  }
  const resolveProfile = adapter('resolveProfile', options.resolveProfile, "the principal's `profiles` list", (where, value) => {
    if (typeof value !== 'function') {
      throw new OptionError(`${where} must be a function (code, principal) => Profile | null, got ${describeType(value)}`, 'INVALID_ADAPTER');
    }
    if (value === staticProfiles) throw new OptionError(`${where} is the factory staticProfiles itself: did you mean staticProfiles([...])?`, 'INVALID_ADAPTER');
  });
  const storage = adapter('storage', options.storage, 'new MemoryStorage(), lost on restart', (where, value) => {
    assertAdapter(where, value, STORAGE_METHODS, 'Storage');
    // The inbound methods serve one flow together: half of them would fail at the first MO.
    const has = INBOUND_METHODS.filter((name) => typeof (value as Record<string, unknown>)[name] === 'function');
    if (has.length > 0 && has.length < INBOUND_METHODS.length) {
      const missing = INBOUND_METHODS.filter((name) => !has.includes(name)).map((name) => `${name}()`);
      throw new OptionError(`${where} has some inbound methods but not ${missing.join(', ')}: give all of them or none`, 'INVALID_ADAPTER');
    }
  });
  const delivery = adapter('delivery', options.delivery, 'new SimulatorDelivery(), a fake carrier', (where, value) =>
    assertAdapter(where, value, DELIVERY_METHODS, 'DeliveryAdapter'),
  );
  const basePath = (options.basePath ?? '/api/outbox').replace(/\/+$/, '');
  if (basePath !== '' && !basePath.startsWith('/')) {
    throw new OptionError(`createSmsRouter: \`basePath\` must start with "/", got "${basePath}"`);
  }
  // Written into Express route patterns, where `:`, `*`, `{` and the like mean parameters:
  // a base path is literal segments of URL-safe characters.
  if (!/^(\/[A-Za-z0-9._~-]+)*$/.test(basePath)) {
    throw new OptionError(`createSmsRouter: \`basePath\` must be "/"-separated segments of letters, digits and . _ ~ -, got "${basePath}"`);
  }
  const limits = section('limits', options.limits, LIMIT_DEFAULTS);
  const rateLimit = resolveRateLimitOptions(options.rateLimit);
  const storageAdapter = storage ?? new MemoryStorage();
  return {
    verifyKey: options.verifyKey,
    resolveProfile: resolveProfile ?? principalProfiles,
    storage: storageAdapter,
    delivery: delivery ?? new SimulatorDelivery(),
    basePath,
    limits,
    worker: section('worker', options.worker, WORKER_DEFAULTS),
    backlog: options.backlog === false ? false : section('backlog', options.backlog, BACKLOG_DEFAULTS),
    dlr: resolveDlrOptions(options.dlr),
    inbound: resolveInboundOptions(options.inbound, options.verifyKey, resolveProfile ?? principalProfiles),
    retention: options.retention === false ? false : section('retention', options.retention, RETENTION_DEFAULTS),
    idempotency: section('idempotency', options.idempotency, IDEMPOTENCY_DEFAULTS),
    credit: resolveCreditOptions(options.credit, storageAdapter),
    rateLimit,
    openapi: resolveOpenApiOptions(options.openapi, limits, rateLimit === false ? 'refused' : rateLimit.headers),
    logger: resolveLogger(options.logger),
    metrics: resolveMetrics(options.metrics),
    serverErrors: resolveServerErrors(options.serverErrors),
    instanceId: options.instanceId ?? randomUUID(),
    now: options.now ?? Date.now,
  };
}

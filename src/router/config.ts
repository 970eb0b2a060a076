/**
 * `resolveOptions`: checks the router's options once, at construction, and fills every
 * default, so the rest of the code reads a complete config. Each part's options, with their
 * defaults and their resolver, live in that part's `options.ts` (dlr/, inbound/, worker/,
 * http/, http/rate-limit/, openapi/, observe/, auth/, storage/, delivery/); this file only
 * checks the top-level keys and the router's own paths (`basePath`, `carrierPath`), and composes the parts. A
 * mistake throws an {@link OptionError} naming the option, with a "did you mean" hint for a
 * typo, at start-up rather than at the first request.
 */
import { randomUUID } from 'node:crypto';
import { resolveKeyVerifier, resolveProfileResolver } from '../auth/options.js';
import { resolveDelivery } from '../delivery/options.js';
import { resolveDlrOptions } from '../dlr/options.js';
import { OptionError } from '../errors.js';
import {
  resolveBacklogOptions,
  resolveCreditOptions,
  resolveIdempotencyOptions,
  resolveLimitOptions,
  resolveServerErrors,
  resolveSpendCapsOptions,
} from '../http/options.js';
import { DEFAULT_RATE_LIMIT_HEADERS, resolveRateLimitOptions } from '../http/rate-limit/options.js';
import { resolveInboundOptions } from '../inbound/options.js';
import { resolveLogger, resolveMetrics, resolveTracing } from '../observe/options.js';
import { resolveOpenApiOptions } from '../openapi/options.js';
import { resolveStorage } from '../storage/options.js';
import { assertKnownKeys } from '../util/known-keys.js';
import { resolveRetentionOptions, resolveWorkerOptions } from '../worker/options.js';
import type { SmsRouterConfig, SmsRouterOptions } from './options.js';

/** The default of `basePath`. */
export const DEFAULT_BASE_PATH = '/api/outbox';

const OPTION_KEYS = [
  'verifyKey', 'resolveProfile', 'storage', 'delivery', 'basePath', 'carrierPath', 'limits',
  'worker', 'backlog', 'dlr', 'inbound', 'retention', 'idempotency', 'credit', 'spendCaps', 'rateLimit', 'openapi', 'serverErrors', 'logger', 'metrics', 'tracing', 'instanceId', 'now',
] as const;

/**
 * A path option without its trailing `/`. Written into Express route patterns, where `:`,
 * `*`, `{` and the like mean parameters: so literal segments of URL-safe characters.
 */
function literalPath(name: string, given: string): string {
  const path = given.replace(/\/+$/, '');
  if (path !== '' && !path.startsWith('/')) {
    throw new OptionError(`createSmsRouter: \`${name}\` must start with "/", got "${path}"`);
  }
  if (!/^(\/[A-Za-z0-9._~-]+)*$/.test(path)) {
    throw new OptionError(`createSmsRouter: \`${name}\` must be "/"-separated segments of letters, digits and . _ ~ -, got "${path}"`);
  }
  return path;
}

/**
 * Checks `options` and fills every default. Throws a TypeError naming the bad option (with
 * a "did you mean" hint for a typo) so mistakes surface at start-up, not at the first request.
 * Adapters are checked for the methods of their contract (see util/adapter-check.ts).
 */
export function resolveOptions(options: SmsRouterOptions): SmsRouterConfig {
  if (typeof options !== 'object' || options === null) throw new OptionError('createSmsRouter: options are required');
  assertKnownKeys('createSmsRouter', options, OPTION_KEYS);
  const verifyKey = resolveKeyVerifier(options.verifyKey);
  const resolveProfile = resolveProfileResolver(options.resolveProfile);
  const storage = resolveStorage(options.storage);
  const delivery = resolveDelivery(options.delivery);
  const basePath = literalPath('basePath', options.basePath ?? DEFAULT_BASE_PATH);
  const carrierPath = literalPath('carrierPath', options.carrierPath ?? `${basePath}/carrier`);
  const limits = resolveLimitOptions(options.limits);
  const rateLimit = resolveRateLimitOptions(options.rateLimit);
  return {
    verifyKey,
    resolveProfile,
    storage,
    delivery,
    basePath,
    carrierPath,
    limits,
    worker: resolveWorkerOptions(options.worker),
    backlog: resolveBacklogOptions(options.backlog),
    dlr: resolveDlrOptions(options.dlr),
    inbound: resolveInboundOptions(options.inbound, verifyKey, resolveProfile),
    retention: resolveRetentionOptions(options.retention),
    idempotency: resolveIdempotencyOptions(options.idempotency),
    credit: resolveCreditOptions(options.credit, storage),
    spendCaps: resolveSpendCapsOptions(options.spendCaps),
    rateLimit,
    openapi: resolveOpenApiOptions(options.openapi, limits, rateLimit === false ? DEFAULT_RATE_LIMIT_HEADERS : rateLimit.headers),
    logger: resolveLogger(options.logger),
    metrics: resolveMetrics(options.metrics),
    tracing: resolveTracing(options.tracing),
    serverErrors: resolveServerErrors(options.serverErrors),
    instanceId: options.instanceId ?? randomUUID(),
    now: options.now ?? Date.now,
  };
}

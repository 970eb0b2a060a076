/**
 * Resolves the observing options, `logger` and `metrics`: checked once at construction,
 * so a registry passed alone or a logger without its methods fails at start-up.
 */
import type { SmsLogger } from '../observe/logging.js';
import type { MetricsConfig, MetricsOptions, PromClient, PromRegistry } from '../observe/metrics.js';
import { assertKnownKeys } from '../util/known-keys.js';
import { OptionError } from '../errors.js';

/**
 * Checks the `logger` option at construction: `null` when none is given, else the logger,
 * which must have `info`, `warn` and `error` methods (and `debug`, if any, a method too).
 */
export function resolveLogger(logger: SmsLogger | undefined): SmsLogger | null {
  if (logger === undefined) return null;
  if (typeof logger !== 'object' || logger === null) {
    throw new OptionError('createSmsRouter: `logger` must be an object with info, warn and error methods (pino works)');
  }
  for (const level of ['info', 'warn', 'error', 'debug'] as const) {
    const method: unknown = logger[level];
    if (method === undefined && level === 'debug') continue;
    if (typeof method !== 'function') throw new OptionError(`createSmsRouter: \`logger.${level}\` must be a function`);
  }
  return logger;
}

/**
 * Checks the `metrics` option at construction: `null` when none is given, else the
 * resolved config. Throws a TypeError naming what is wrong (most often: passing the
 * registry alone instead of `{ client }`).
 */
export function resolveMetrics(options: MetricsOptions | undefined): MetricsConfig | null {
  if (options === undefined) return null;
  if (typeof options !== 'object' || options === null) {
    throw new OptionError("createSmsRouter: `metrics` must be an object: { client } with client from `import * as client from 'prom-client'`");
  }
  if (!('client' in options) && typeof (options as Partial<PromRegistry>).getSingleMetric === 'function') {
    throw new OptionError("createSmsRouter: `metrics` takes { client, registry?, profileLabel? }, not a registry alone: `metrics.client` must be the prom-client module (`import * as client from 'prom-client'`)");
  }
  assertKnownKeys('metrics', options, ['client', 'registry', 'profileLabel']);
  const client = options.client as Partial<PromClient> | undefined;
  if (typeof client !== 'object' || client === null || typeof client.Counter !== 'function' || typeof client.Histogram !== 'function' || typeof client.Gauge !== 'function') {
    throw new OptionError("createSmsRouter: `metrics.client` must be the prom-client module (`import * as client from 'prom-client'`)");
  }
  const registry = options.registry ?? client.register;
  if (typeof registry !== 'object' || registry === null || typeof registry.getSingleMetric !== 'function' || typeof registry.registerMetric !== 'function') {
    throw new OptionError('createSmsRouter: `metrics.registry` must be a prom-client Registry');
  }
  const profileLabel = options.profileLabel ?? true;
  if (typeof profileLabel !== 'boolean') throw new OptionError('createSmsRouter: `metrics.profileLabel` must be true or false');
  return { client: client as PromClient, registry, profileLabel };
}

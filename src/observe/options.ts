/**
 * The observing options, `logger` and `metrics`: their types (the parts of a logger and of
 * prom-client the router uses), their defaults, and their resolution, checked once at
 * construction, so a registry passed alone or a logger without its methods fails at start-up.
 */
import { assertKnownKeys } from '../util/known-keys.js';
import { OptionError } from '../errors.js';
import { describeType } from '../util/adapter-check.js';

/** One log method: a structured object first, then the message (pino's calling convention). */
export type LogMethod = (obj: Record<string, unknown>, msg: string) => void;

/**
 * A logger the router can write to: pino, or anything with the same methods (bunyan and
 * `console` work too). Without `debug`, debug-level lines are dropped.
 */
export interface SmsLogger {
  /** Terminal states, inbound messages; storage ready, carrier bound (again). */
  info: LogMethod;
  /** Delivery reports that failed, carrier errors that will be retried, requests refused with a 503 (the backlog full). */
  warn: LogMethod;
  /** The `error` event: failures no client was told about; a carrier outage, once. */
  error: LogMethod;
  /** Each message accepted, submitted and its non-terminal changes; reports sent; each failed reconnect; requests rejected with a 4xx. */
  debug?: LogMethod;
}

/** The part of a prom-client `Registry` the router uses. */
export interface PromRegistry {
  /** The metric registered under `name`, if any (prom-client's `getSingleMetric`). */
  getSingleMetric(name: string): unknown;
  /** Adds a metric made by the router. */
  registerMetric(metric: PromCounter | PromHistogram | PromGauge): void;
}

/** What the router passes to a prom-client metric constructor. */
export interface PromMetricConfig {
  /** Full metric name, `sms_outbox_...`. */
  name: string;
  /** The HELP text. */
  help: string;
  /** Label names, fixed for the metric's life. */
  labelNames: readonly string[];
  /**
   * Always empty, so prom-client does not add the metric to its default registry: the
   * router registers it on the chosen registry itself (`never[]` keeps this type
   * assignable from prom-client's own, whose registry type this file does not import).
   */
  registers: never[];
  /** Histogram bucket upper bounds, for histograms only. */
  buckets?: number[];
}

/** The part of a prom-client `Counter` the router uses. */
export interface PromCounter {
  /** Adds `value` (default 1) to the series of `labels`. */
  inc(labels: Record<string, string>, value?: number): void;
}

/** The part of a prom-client `Histogram` the router uses. */
export interface PromHistogram {
  /** Records one observation in the series of `labels`. */
  observe(labels: Record<string, string>, value: number): void;
}

/** The part of a prom-client `Gauge` the router uses. */
export interface PromGauge {
  /** Sets the series of `labels` to `value`. */
  set(labels: Record<string, string>, value: number): void;
}

/**
 * The part of the prom-client module the router uses: pass the module itself
 * (`import * as client from 'prom-client'`, or its default export). prom-client 15 fits.
 */
export interface PromClient {
  /** prom-client's `Counter` class. */
  Counter: new (config: PromMetricConfig) => PromCounter;
  /** prom-client's `Histogram` class. */
  Histogram: new (config: PromMetricConfig) => PromHistogram;
  /** prom-client's `Gauge` class. */
  Gauge: new (config: PromMetricConfig) => PromGauge;
  /** prom-client's default registry, used when no `registry` is given. */
  register: PromRegistry;
}

/**
 * The `metrics` option.
 *
 * It takes the host's prom-client module rather than a bare registry because a registry
 * cannot create metrics: the `Counter` and `Histogram` classes are needed too. Taking them
 * from the host (a) keeps prom-client out of this package's dependencies (it is an optional
 * peer; a host without metrics never installs it), (b) guarantees the classes and the
 * registry come from the same copy of prom-client, whatever the host's module format or
 * bundler, and (c) keeps router construction synchronous (no `await import()`). The types
 * above are structural, so the published declarations do not reference prom-client either
 * and type-check in a project that does not install it.
 */
export interface MetricsOptions {
  /** The prom-client module: `import * as client from 'prom-client'`. Required. */
  client: PromClient;
  /** The registry the metrics go in. Default: `client.register` (prom-client's default registry). */
  registry?: PromRegistry;
  /**
   * Label the accepted-message counters with the `profile` code. Its values are bounded by
   * the profiles you configure; a gateway with thousands of profiles turns it off (`false`)
   * to keep one series per endpoint. Default `true`.
   */
  profileLabel?: boolean;
}

/** {@link MetricsOptions} with every default filled in. */
export interface MetricsConfig {
  client: PromClient;
  registry: PromRegistry;
  profileLabel: boolean;
}

/** The default of `metrics.profileLabel`: accepted-message counters carry the `profile` label. */
export const DEFAULT_PROFILE_LABEL = true;

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
  const profileLabel = options.profileLabel ?? DEFAULT_PROFILE_LABEL;
  if (typeof profileLabel !== 'boolean') throw new OptionError('createSmsRouter: `metrics.profileLabel` must be true or false');
  return { client: client as PromClient, registry, profileLabel };
}

/** Checks the `tracing` option at construction: `true` unless `false` is given. */
export function resolveTracing(given: unknown): boolean {
  if (given === undefined || given === true) return true;
  if (given === false) return false;
  throw new OptionError(`createSmsRouter: \`tracing\` must be true or false, got ${describeType(given)}`);
}

/**
 * The options of the SMPP adapter and their resolution into a complete configuration:
 * a `url` read into its fields, defaults filled in, and every value checked. Resolving
 * happens in the constructor so that a typo or a nonsense value fails when the host
 * builds the adapter, not at the first connect minutes later.
 */
import { assertKnownKeys } from '../../util/known-keys.js';
import { parseSmppUrl } from './url.js';
import { OptionError } from '../../errors.js';

/** The `sharedRate` option of `SmppDelivery`: one `tps` for every instance, kept in Redis. */
export interface SmppSharedRateOptions {
  /**
   * Sends a raw Redis command: node-redis `(...args) => client.sendCommand(args)`, ioredis
   * `(command, ...args) => client.call(command, ...args)` (as `RedisBudgetStore`).
   */
  sendCommand: (...args: string[]) => Promise<unknown>;
  /** The key of the account's schedule. Default `sms-outbox:submits:<systemId>@<host>:<port>`. */
  key?: string;
  /**
   * Instances sharing the account: while Redis cannot be reached, each paces itself at
   * `tps / instances`. Default 1.
   */
  instances?: number;
}

/** Options of `SmppDelivery`. Give `url`, or `host` and `systemId` (or both: fields win). */
export interface SmppDeliveryOptions {
  /** `smpp://system_id:password@host:port` (`ssmpp://` for TLS; `?system_type=` allowed). */
  url?: string;
  /** SMSC host. Required unless `url` names it. */
  host?: string;
  /** SMSC port. Default 2775 (3550 for TLS). */
  port?: number;
  /** Connect with TLS. Default false (true for an `ssmpp://` url). */
  tls?: boolean;
  /** The bind's `system_id`. Required unless `url` names it. */
  systemId?: string;
  /** The bind's `password`. Default empty. */
  password?: string;
  /** The bind's `system_type`. Default empty. */
  systemType?: string;
  /** `transceiver` (one bind), or `separate` transmitter and receiver binds. Default `transceiver`. */
  bindMode?: 'transceiver' | 'separate';
  /**
   * Binds that submit, to the one SMSC: that many transceivers, or (`separate`) that many
   * transmitters and one receiver. Submits go to the least busy bound one. Default 1.
   */
  binds?: number;
  /** Interval of the `enquire_link` keep-alive, ms; an unanswered one drops the link. Default 30000. */
  enquireLinkMs?: number;
  /** First reconnect delay after a drop or a failed bind, ms; doubles per failure. Default 1000. */
  reconnectMinMs?: number;
  /** Ceiling of the reconnect delay, ms. Default 30000. */
  reconnectMaxMs?: number;
  /** Most `submit_sm` awaiting their response at once, per bind. Default 50. */
  window?: number;
  /**
   * Most `submit_sm` sent per second by this adapter over all its binds: the account's
   * rate. With `sharedRate`, by every instance together. Default unlimited (`Infinity`).
   */
  tps?: number;
  /**
   * Share `tps` with every instance through Redis: each submit takes a permit from one
   * schedule (needs `tps`). Without it, give each of N instances `tps / N`.
   */
  sharedRate?: SmppSharedRateOptions;
  /** How long `submit` waits for a bound session and a window slot before rejecting (retryable), ms. Default 10000. */
  waitTimeoutMs?: number;
  /** How long a `submit_sm` or a bind waits for its response before it is given up (retryable), ms. Default 30000. */
  responseTimeoutMs?: number;
  /** `retryAfterMs` of the retryable error for ESME_RTHROTTLED / ESME_RMSGQFUL. Default 1000. */
  throttleRetryMs?: number;
  /** How parts of a multipart message are tied together: a UDH, or SAR TLVs. Default `udh`. */
  concatenation?: 'udh' | 'sar';
  /** `service_type` of each `submit_sm`. Default empty (the SMSC's default). */
  serviceType?: string;
  /** TON of a numeric sender of at most 8 digits (a short code). Default 3 (network specific). */
  shortCodeTon?: number;
  /** NPI of a short-code sender. Default 0 (unknown). */
  shortCodeNpi?: number;
}

/**
 * {@link SmppDeliveryOptions} resolved: the url read into its fields, every default
 * filled in and every value checked. The `url` itself is gone.
 */
export interface SmppConfig {
  /** SMSC host. */
  host: string;
  /** SMSC port. */
  port: number;
  /** Connect with TLS. */
  tls: boolean;
  /** The bind's `system_id`. */
  systemId: string;
  /** The bind's `password`. */
  password: string;
  /** The bind's `system_type`. */
  systemType: string;
  /** One transceiver bind, or separate transmitter and receiver binds. */
  bindMode: 'transceiver' | 'separate';
  /** Binds that submit. */
  binds: number;
  /** Interval of the `enquire_link` keep-alive, ms. */
  enquireLinkMs: number;
  /** First reconnect delay, ms. */
  reconnectMinMs: number;
  /** Ceiling of the reconnect delay, ms. */
  reconnectMaxMs: number;
  /** Most `submit_sm` awaiting their response at once, per bind. */
  window: number;
  /** Most `submit_sm` sent per second over all binds (`Infinity` for no cap). */
  tps: number;
  /** The shared rate, its key and instance count filled in; `null` without one. */
  sharedRate: Required<SmppSharedRateOptions> | null;
  /** How long a submit waits for a bind and a window slot, ms. */
  waitTimeoutMs: number;
  /** How long a `submit_sm` or a bind waits for its response, ms. */
  responseTimeoutMs: number;
  /** `retryAfterMs` of a throttled submit, ms. */
  throttleRetryMs: number;
  /** UDH or SAR TLVs for multipart messages. */
  concatenation: 'udh' | 'sar';
  /** `service_type` of each `submit_sm`. */
  serviceType: string;
  /** TON of a short-code sender. */
  shortCodeTon: number;
  /** NPI of a short-code sender. */
  shortCodeNpi: number;
}

const OPTION_NAMES: readonly (keyof SmppDeliveryOptions)[] = [
  'url',
  'host',
  'port',
  'tls',
  'systemId',
  'password',
  'systemType',
  'bindMode',
  'binds',
  'enquireLinkMs',
  'reconnectMinMs',
  'reconnectMaxMs',
  'window',
  'tps',
  'sharedRate',
  'waitTimeoutMs',
  'responseTimeoutMs',
  'throttleRetryMs',
  'concatenation',
  'serviceType',
  'shortCodeTon',
  'shortCodeNpi',
];

/**
 * Checks the options and fills in the defaults. Throws a `TypeError` on an unknown
 * option (with a hint at the nearest known one), a missing host or system id, or a
 * value out of range.
 */
export function resolveSmppOptions(options: SmppDeliveryOptions): SmppConfig {
  assertKnownKeys('SmppDelivery', options, OPTION_NAMES);
  const fromUrl = options.url !== undefined ? parseSmppUrl(options.url) : undefined;
  const tls = options.tls ?? fromUrl?.tls ?? false;
  const host = options.host ?? fromUrl?.host;
  const systemId = options.systemId ?? fromUrl?.systemId;
  if (!host) throw new OptionError('SmppDelivery needs `host` or a `url` (smpp://system_id:password@host:port)');
  if (!systemId) throw new OptionError('SmppDelivery needs `systemId` or a `url` with a user part');
  const config: SmppConfig = {
    host,
    port: options.port ?? fromUrl?.port ?? (tls ? 3550 : 2775),
    tls,
    systemId,
    password: options.password ?? fromUrl?.password ?? '',
    systemType: options.systemType ?? fromUrl?.systemType ?? '',
    bindMode: options.bindMode ?? 'transceiver',
    binds: options.binds ?? 1,
    enquireLinkMs: options.enquireLinkMs ?? 30_000,
    reconnectMinMs: options.reconnectMinMs ?? 1_000,
    reconnectMaxMs: options.reconnectMaxMs ?? 30_000,
    window: options.window ?? 50,
    tps: options.tps ?? Number.POSITIVE_INFINITY,
    sharedRate: null,
    waitTimeoutMs: options.waitTimeoutMs ?? 10_000,
    responseTimeoutMs: options.responseTimeoutMs ?? 30_000,
    throttleRetryMs: options.throttleRetryMs ?? 1_000,
    concatenation: options.concatenation ?? 'udh',
    serviceType: options.serviceType ?? '',
    shortCodeTon: options.shortCodeTon ?? 3,
    shortCodeNpi: options.shortCodeNpi ?? 0,
  };
  if (!Number.isInteger(config.port) || config.port < 1 || config.port > 65535) {
    throw new OptionError(`SmppDelivery option "port" must be 1..65535, got ${config.port}`);
  }
  if (config.bindMode !== 'transceiver' && config.bindMode !== 'separate') {
    throw new OptionError(`SmppDelivery option "bindMode" must be "transceiver" or "separate"`);
  }
  if (config.concatenation !== 'udh' && config.concatenation !== 'sar') {
    throw new OptionError(`SmppDelivery option "concatenation" must be "udh" or "sar"`);
  }
  if (!Number.isInteger(config.window) || config.window < 1) {
    throw new OptionError(`SmppDelivery option "window" must be a positive integer, got ${config.window}`);
  }
  if (!(config.tps > 0)) throw new OptionError(`SmppDelivery option "tps" must be positive, got ${config.tps}`);
  if (!Number.isInteger(config.binds) || config.binds < 1 || config.binds > 64) {
    throw new OptionError(`SmppDelivery option "binds" must be an integer 1..64, got ${config.binds}`);
  }
  if (options.sharedRate !== undefined) config.sharedRate = resolveSharedRate(options.sharedRate, config);
  for (const key of ['enquireLinkMs', 'reconnectMinMs', 'reconnectMaxMs', 'waitTimeoutMs', 'responseTimeoutMs', 'throttleRetryMs'] as const) {
    if (!(config[key] > 0) || !Number.isFinite(config[key])) {
      throw new OptionError(`SmppDelivery option "${key}" must be a positive number of ms, got ${config[key]}`);
    }
  }
  return config;
}

function resolveSharedRate(shared: SmppSharedRateOptions, config: SmppConfig): Required<SmppSharedRateOptions> {
  if (typeof shared !== 'object' || shared === null || typeof shared.sendCommand !== 'function') {
    throw new OptionError('SmppDelivery option "sharedRate" needs `sendCommand`, e.g. (...args) => client.sendCommand(args)');
  }
  assertKnownKeys('SmppDelivery sharedRate', shared, ['sendCommand', 'key', 'instances']);
  if (!Number.isFinite(config.tps)) throw new OptionError('SmppDelivery option "sharedRate" needs "tps": the rate the instances share');
  const resolved = {
    sendCommand: shared.sendCommand,
    key: shared.key ?? `sms-outbox:submits:${config.systemId}@${config.host}:${config.port}`,
    instances: shared.instances ?? 1,
  };
  if (typeof resolved.key !== 'string' || resolved.key === '') throw new OptionError('SmppDelivery option "sharedRate.key" must be a non-empty string');
  if (!Number.isInteger(resolved.instances) || resolved.instances < 1) {
    throw new OptionError(`SmppDelivery option "sharedRate.instances" must be a positive integer, got ${resolved.instances}`);
  }
  return resolved;
}

/**
 * Resolves the delivery report options (`dlr`) into a complete config, checked once at
 * construction so a typo fails there, not at the first report.
 */
import { compileAllowList, type AddressAllowance } from '../dlr/address-guard.js';
import type { DlrConfig, DlrOptions } from '../dlr/options.js';
import { DEFAULT_TIMEOUT_MS, USER_AGENT } from '../dlr/post.js';
import { DEFAULT_SCHEDULE } from '../dlr/schedule.js';
import { signingKey } from '../dlr/sign.js';
import { assertKnownKeys } from '../util/known-keys.js';
import { OptionError } from '../errors.js';

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
  const concurrency = integer('concurrency', options.concurrency, 64, 1);
  const perHostConcurrency = integer('perHostConcurrency', options.perHostConcurrency, 8, 1);
  const leaseMs = integer('leaseMs', options.leaseMs, 2 * timeoutMs + 5_000, 1);
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
    pollIntervalMs: integer('pollIntervalMs', options.pollIntervalMs, 500, 1),
    leaseMs,
    batchSize: integer('batchSize', options.batchSize, concurrency, 1),
    userAgent: USER_AGENT,
  };
}

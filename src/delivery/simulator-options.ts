/**
 * The simulated carrier's options, their defaults and their checking: what it does with a
 * part (the outcome weights), how long it takes, how fast it accepts, and its quirks.
 */
import { assertKnownKeys, assertNumber } from '../util/known-keys.js';
import { OptionError } from '../errors.js';

/** What the simulated carrier may do with a part. */
export type SimulatedOutcome =
  | 'delivered'
  | 'absent_subscriber'
  | 'delivery_impossible'
  | 'expired'
  | 'sender_name_blacklisted'
  | 'invalid_source_address'
  | 'rejected'
  | 'throttled';

/** Every {@link SimulatedOutcome}, in a stable order (the order weights are drawn in). */
export const SIMULATED_OUTCOMES: readonly SimulatedOutcome[] = [
  'delivered',
  'absent_subscriber',
  'delivery_impossible',
  'expired',
  'sender_name_blacklisted',
  'invalid_source_address',
  'rejected',
  'throttled',
];

/** A delay in milliseconds: fixed, or drawn uniformly from `[min, max]`. */
export type SimulatedDelay = number | readonly [min: number, max: number];

/** Options of {@link SimulatorDelivery}; every one is optional. */
export interface SimulatorOptions {
  /** Delay between a part's acceptance and its receipt, ms. Default `[20, 200]`. */
  latencyMs?: SimulatedDelay;
  /** Delay before `submit` settles (the carrier's response time), ms. Default `0`. */
  submitLatencyMs?: SimulatedDelay;
  /**
   * Relative weights of the outcomes, drawn per part. Default `{ delivered: 1 }`.
   * `sender_name_blacklisted` and `invalid_source_address` refuse the part at submit
   * (a permanent {@link DeliveryError}, state `rejected`); `throttled` refuses it with a
   * retryable one; the others accept it and report their outcome in the receipt.
   */
  outcomes?: Partial<Record<SimulatedOutcome, number>>;
  /**
   * Most submits per second. Submits over the cap wait their turn (a token bucket of one
   * token, so `n` submits take at least `(n - 1) / tps` seconds); they never fail for it.
   * Default: unlimited.
   */
  tps?: number;
  /** Seed of the PRNG (mulberry32) behind every random choice. Default: random. */
  seed?: number;
  /** Probability (0 to 1) that a receipt is reported a second time. Default `0`. */
  duplicateReceipts?: number;
  /**
   * Report receipt ids in decimal although acks give them in hex, as some SMPP carriers do.
   * Default `false`.
   */
  decimalReceiptIds?: boolean;
  /** `retryAfterMs` of the error a `throttled` submit rejects with. Default `1000`. */
  retryAfterMs?: number;
  /**
   * How many of the latest accepted parts {@link SimulatorDelivery.submitted} keeps, for a
   * test or a dashboard to look at. Default `1000`: a long-running demo must not keep
   * every part it ever accepted.
   */
  keepSubmitted?: number;
  /**
   * The longest a receipt may take after an accepted submit, ms: the router ends a message
   * still `submitted` after this long `expired` (reason `unknown`), which happens only when
   * its receipt died with a crashed process (see `DeliveryAdapter.receiptDeadlineMs`).
   * At least the longest `latencyMs`. Default: the longest `latencyMs` plus 60,000, so a
   * receipt refused and re-sent (up to 20 s) still lands well inside it.
   */
  receiptDeadlineMs?: number;
}

/**
 * What the default `receiptDeadlineMs` adds to the longest latency, ms: room for a receipt
 * that overtook the recording of its submission and was refused and sent again, and for a
 * storage slow to record under load.
 */
const RECEIPT_DEADLINE_MARGIN_MS = 60_000;

const OPTION_KEYS: readonly (keyof SimulatorOptions)[] = [
  'latencyMs',
  'submitLatencyMs',
  'outcomes',
  'tps',
  'seed',
  'duplicateReceipts',
  'decimalReceiptIds',
  'retryAfterMs',
  'keepSubmitted',
  'receiptDeadlineMs',
];

/** Resolved options: every field present and checked. */
export interface SimulatorConfig {
  latency: readonly [number, number];
  submitLatency: readonly [number, number];
  /** Cumulative weights, in {@link SIMULATED_OUTCOMES} order. */
  cumulative: readonly number[];
  totalWeight: number;
  intervalMs: number;
  seed: number;
  duplicateReceipts: number;
  decimalReceiptIds: boolean;
  retryAfterMs: number;
  keepSubmitted: number;
  receiptDeadlineMs: number;
}

/** Checks the simulator's options and fills every default; throws an `OptionError` naming the bad one. */
export function resolveSimulatorOptions(options: SimulatorOptions): SimulatorConfig {
  const where = 'SimulatorDelivery';
  assertKnownKeys(where, options, OPTION_KEYS);
  const outcomes = options.outcomes ?? { delivered: 1 };
  assertKnownKeys(`${where} outcomes`, outcomes, SIMULATED_OUTCOMES);
  let totalWeight = 0;
  const cumulative = SIMULATED_OUTCOMES.map((name) => {
    const weight = outcomes[name] ?? 0;
    assertNumber(`${where}: outcomes.${name}`, weight, 0, false);
    totalWeight += weight;
    return totalWeight;
  });
  if (totalWeight === 0) throw new OptionError(`${where}: outcomes must give at least one outcome a weight above 0`);

  const tps = options.tps ?? Infinity;
  if (tps !== Infinity) assertNumber(`${where}: tps`, tps, Number.MIN_VALUE, false);
  const seed = options.seed ?? Math.floor(Math.random() * 0x100000000);
  assertNumber(`${where}: seed`, seed, -Infinity, true);
  const duplicateReceipts = options.duplicateReceipts ?? 0;
  assertNumber(`${where}: duplicateReceipts`, duplicateReceipts, 0, false);
  if (duplicateReceipts > 1) throw new OptionError(`${where}: duplicateReceipts is a probability, 0 to 1; got ${duplicateReceipts}`);
  const decimalReceiptIds = options.decimalReceiptIds ?? false;
  if (typeof decimalReceiptIds !== 'boolean') throw new OptionError(`${where}: decimalReceiptIds must be a boolean`);
  const retryAfterMs = options.retryAfterMs ?? 1000;
  assertNumber(`${where}: retryAfterMs`, retryAfterMs, 0, false);
  const keepSubmitted = options.keepSubmitted ?? 1000;
  assertNumber(`${where}: keepSubmitted`, keepSubmitted, 0, true);

  const latency = resolveDelay(`${where}: latencyMs`, options.latencyMs ?? [20, 200]);
  const receiptDeadlineMs = options.receiptDeadlineMs ?? latency[1] + RECEIPT_DEADLINE_MARGIN_MS;
  assertNumber(`${where}: receiptDeadlineMs`, receiptDeadlineMs, 1, false);
  if (receiptDeadlineMs < latency[1]) {
    throw new OptionError(
      `${where}: receiptDeadlineMs (${receiptDeadlineMs}) must be at least the longest latencyMs (${latency[1]}): a receipt would come after its message was given up`,
    );
  }

  return {
    latency,
    submitLatency: resolveDelay(`${where}: submitLatencyMs`, options.submitLatencyMs ?? 0),
    cumulative,
    totalWeight,
    intervalMs: tps === Infinity ? 0 : 1000 / tps,
    seed,
    duplicateReceipts,
    decimalReceiptIds,
    retryAfterMs,
    keepSubmitted,
    receiptDeadlineMs,
  };
}

function resolveDelay(where: string, delay: SimulatedDelay): readonly [number, number] {
  if (typeof delay === 'number') {
    assertNumber(where, delay, 0, false);
    return [delay, delay];
  }
  if (!Array.isArray(delay) || delay.length !== 2) throw new OptionError(`${where} must be a number or [min, max]`);
  const [min, max] = delay as readonly [number, number];
  assertNumber(`${where}[0]`, min, 0, false);
  assertNumber(`${where}[1]`, max, min, false);
  return [min, max];
}

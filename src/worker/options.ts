/**
 * The worker's options: the submission worker's (`worker`) and the purge of old records
 * (`retention`); their defaults, and their resolution, checked once at construction.
 */
import { resolveIntegerSection } from '../util/known-keys.js';

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

/** The worker's defaults. */
export const WORKER_DEFAULTS: Required<WorkerOptions> = {
  concurrency: 64,
  pollIntervalMs: 250,
  leaseMs: 60_000,
  maxAttempts: 10,
  retryBaseMs: 1_000,
  retryMaxMs: 600_000,
  receiptWaitMs: 60_000,
  receiptTimeoutMs: 48 * 3600_000,
};

/** Checks the `worker` option and fills its defaults. */
export function resolveWorkerOptions(given: WorkerOptions | undefined): Required<WorkerOptions> {
  return resolveIntegerSection('worker', given, WORKER_DEFAULTS);
}

/** How terminal messages and expired idempotency keys are purged so storage does not grow without end. */
export interface RetentionOptions {
  /** Terminal messages last changed longer ago than this are deleted, ms. Default 30 days. */
  maxAgeMs?: number;
  /** How often to purge, ms. Default 1 hour. */
  intervalMs?: number;
  /**
   * Most messages (or keys) deleted per storage call (a purge loops until done, giving the
   * event loop back between two calls). Default 250: on the memory storage one call is one
   * synchronous step (a message leaves its list and lookup indexes too), and 250 keeps it
   * well under 40 ms on a slow core.
   */
  batchSize?: number;
}

/** The retention defaults. */
export const RETENTION_DEFAULTS: Required<RetentionOptions> = {
  maxAgeMs: 30 * 24 * 3600_000,
  intervalMs: 3600_000,
  batchSize: 250,
};

/** Checks the `retention` option and fills its defaults; `false` keeps terminal messages. */
export function resolveRetentionOptions(given: RetentionOptions | false | undefined): Required<RetentionOptions> | false {
  return given === false ? false : resolveIntegerSection('retention', given, RETENTION_DEFAULTS);
}

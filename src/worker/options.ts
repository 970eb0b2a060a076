/**
 * The submission worker's options and their defaults.
 */

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

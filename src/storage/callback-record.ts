/**
 * A message's delivery report as the storage contract keeps it: its state, and one attempt
 * as the report sender records it. Part of the storage contract (exported with `Storage`),
 * kept in a file of its own.
 *
 * @module
 */

/** The state of a message's delivery report, when it has a callback URL. */
export interface CallbackState {
  /** `pending` until a 2xx (`delivered`) or until given up on (`failed`). */
  state: 'pending' | 'delivered' | 'failed';
  /** Attempts made so far. */
  attempts: number;
  /** HTTP status of the last attempt, or `null` if none answered. */
  lastStatusCode: number | null;
  /** The last attempt's error text (network error, timeout, blocked address). */
  lastError: string | null;
  /** When the next attempt is due (epoch ms), while pending. */
  nextAttemptAt: number | null;
  /**
   * The attempts made before the retry schedule last started again, after them: a replay
   * (`Storage.replayCallbacks`) or the switch to the failover URL. Absent: never.
   */
  restartedAfter?: number;
  /** `true` once the main URL's retries were spent and the report went on to its principal's failover URL; a replay ends it. */
  failover?: boolean;
}

/** The result of one callback attempt, as the DLR sender records it. */
export interface CallbackAttempt {
  /** `delivered` ends it; `retry` schedules `nextAttemptAt`; `failed` gives up. */
  result: 'delivered' | 'retry' | 'failed';
  /** HTTP status, if the receiver answered. */
  statusCode: number | null;
  /** Error text, if it did not answer or was blocked. */
  error: string | null;
  /** When to try again, for `retry`. */
  nextAttemptAt: number | null;
  /** Now, epoch ms. */
  now: number;
  /**
   * With `retry`: the main URL's retries are spent, and the next attempts go to the
   * principal's failover URL, on the retry schedule started anew (`CallbackState.failover`).
   */
  failover?: boolean;
}

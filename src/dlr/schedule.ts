/**
 * When a delivery report is tried again, and when it is given up on.
 *
 * Like Svix (whose schedule is the default): any 2xx delivers; 410 Gone gives up at once
 * (the receiver said the endpoint is gone for good); every other answer (3xx, 4xx, 5xx)
 * and every network error, timeout or blocked address is retried until the schedule runs
 * out. Other 4xx are retried too, because a receiver that answers 401 or 404 during a
 * deploy or a key rotation is usually fixed within the schedule's day.
 */

/** A delay is spread by up to this fraction either way, so a receiver's outage does not end in a stampede. */
export const JITTER = 0.1;

/** The longest wait a `Retry-After` header can impose (24 h). */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** What an attempt's answer means for the report. */
export type AttemptVerdict = 'delivered' | 'gone' | 'retry';

/** Classifies an attempt by its HTTP status (`null`: no answer, which is retried). */
export function verdictOf(statusCode: number | null): AttemptVerdict {
  if (statusCode === null) return 'retry';
  if (statusCode >= 200 && statusCode < 300) return 'delivered';
  if (statusCode === 410) return 'gone';
  return 'retry';
}

/**
 * How long to wait before the next attempt, in ms, or `null` when the schedule is used up
 * (give up).
 *
 * `attemptsMade` counts the attempts made so far, the one just made included; entry
 * `schedule[attemptsMade]` is the next delay. It is spread by +-{@link JITTER} using
 * `random` (a value in [0, 1), as `Math.random` gives). A `retryAfterMs` the receiver
 * asked for wins when it is longer, capped at {@link MAX_RETRY_AFTER_MS}; it never adds
 * an attempt beyond the schedule.
 */
export function nextAttemptDelay(
  attemptsMade: number,
  schedule: readonly number[],
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number | null {
  const base = schedule[attemptsMade];
  if (base === undefined) return null;
  const jittered = base * (1 + (random() * 2 - 1) * JITTER);
  const asked = retryAfterMs === null ? 0 : Math.min(Math.max(retryAfterMs, 0), MAX_RETRY_AFTER_MS);
  return Math.round(Math.max(jittered, asked));
}

/**
 * Retry delays for carrier submissions: exponential with full jitter, bounded.
 */

/**
 * The delay before submission attempt `attempt + 1`, given `attempt` failures so far:
 * `base * 2^(attempt-1)` capped at `max`, scaled by a random factor in [0.5, 1) so that
 * messages that failed together do not retry together. A carrier's own `retryAfterMs`
 * is honoured as a floor.
 */
export function retryDelay(
  attempt: number,
  baseMs: number,
  maxMs: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number {
  const exponential = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.round(exponential * (0.5 + random() / 2));
  return Math.max(jittered, retryAfterMs ?? 0);
}

/**
 * The counters' part of the storage contract (exported with `Storage`), kept in a file of
 * its own like the credit's: what a request's counters carry into `insertMessages`, and the
 * optional method that reads one. Which counters there are (a principal's units of a day, of
 * a month), their limits and when a period ends are the library's rules (http/spend-caps.ts);
 * the storage adds and compares.
 *
 * @module
 */

/**
 * A counter a request adds to (`insertMessages`' `counters`): the one of `principalId` and
 * `period` (created at 0), which must not pass `limit`. The storage reads nothing in `period`.
 */
export interface UnitCounter {
  /** Whose counter. */
  principalId: string;
  /** Which of its counters: a key the library makes (`day:2026-11-29`, `month:2026-11`). */
  period: string;
  /** What the request adds to it (a positive integer). */
  units: number;
  /** What the counter may reach with the request; more, and nothing is stored. */
  limit: number;
}

/**
 * The counters' method: optional. A storage with it keeps a number per principal and period,
 * adds a request's `counters` in the step that stores its messages, each checked against its
 * limit at once (a read and a later write would let two requests pass a limit together),
 * and throws `CounterLimitError` when one would pass it: then nothing is stored and no
 * counter changes. A storage without it is never given counters.
 */
export interface CounterStorage {
  /** The value of `principalId`'s counter `period`, 0 when it has none. */
  countedUnits?(principalId: string, period: string): Promise<number>;
  /**
   * Deletes up to `limit` counters, of every principal, whose period is none of `live` (the
   * library's keys of the periods still counting: the others have ended); returns how many.
   * Optional, with `countedUnits`: without it, ended counters are kept.
   */
  purgeCounters?(live: readonly string[], limit: number): Promise<number>;
}

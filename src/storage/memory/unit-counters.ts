/**
 * The memory store's counters of an insert's guard (`InsertGuard.counters`): one number per
 * principal and period, checked against the guard's limits and then added to, within the
 * one synchronous step of the insert.
 *
 * @module
 */
import type { CounterGuard } from '../record-store.js';

/** Counters by principal and period, created at 0. */
export class UnitCounters {
  readonly #values = new Map<string, number>();

  /** The counter of `principalId` and `period`, 0 when it has none. */
  value(principalId: string, period: string): number {
    return this.#values.get(keyOf(principalId, period)) ?? 0;
  }

  /** The index of the first of `counters` that its units would take past its limit, or -1 when none would. */
  firstOver(counters: readonly CounterGuard[]): number {
    return counters.findIndex((counter) => this.value(counter.principalId, counter.period) + counter.units > counter.limit);
  }

  /** Deletes up to `limit` counters whose period is not in `live`; how many. */
  purge(live: ReadonlySet<string>, limit: number): number {
    let purged = 0;
    for (const key of this.#values.keys()) {
      if (purged >= limit) break;
      if (live.has(key.slice(key.lastIndexOf('\u0000') + 1))) continue;
      this.#values.delete(key);
      purged++;
    }
    return purged;
  }

  /** Adds each of `counters`' units; returns the new values, in order. */
  add(counters: readonly CounterGuard[]): number[] {
    return counters.map((counter) => {
      const key = keyOf(counter.principalId, counter.period);
      const value = (this.#values.get(key) ?? 0) + counter.units;
      this.#values.set(key, value);
      return value;
    });
  }
}

/** One map key per principal and period: a NUL cannot be in either the library makes. */
function keyOf(principalId: string, period: string): string {
  return `${principalId}\u0000${period}`;
}

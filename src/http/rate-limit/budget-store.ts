/**
 * The message budget's store contract, and its in-process implementation. An
 * express-rate-limit `Store` only adds one per call; a budget must add a whole batch, and
 * only when all of it fits, so it has a contract of its own.
 */

/** What {@link BudgetStore.take} found. */
export interface BudgetTake {
  /** True when the messages were counted; false when they would have gone over the limit. */
  taken: boolean;
  /** Messages counted in the key's current window: after taking, or unchanged when refused. */
  used: number;
  /** When the key's current window ends (its count starts again from 0). */
  resetTime: Date;
}

/**
 * Counts messages per key in fixed windows.
 *
 * A store promises that `take` is atomic for every router sharing it: two requests never
 * both fit into the same remaining room. It does not promise to count messages whose
 * request later failed (a storage error after the budget was taken is not refunded), and
 * it does not keep counts across a restart unless its backend does.
 */
export interface BudgetStore {
  /**
   * Adds `count` to `key`'s count in its current window if the sum stays at or under
   * `limit`; otherwise changes nothing. A key without a running window starts one of
   * `windowMs`.
   */
  take(key: string, count: number, limit: number, windowMs: number): Promise<BudgetTake>;
  /** Forgets `key`'s count. */
  reset?(key: string): Promise<void>;
}

interface Window {
  used: number;
  resetAt: number;
}

/** How often at most the memory store walks its map to drop ended windows, ms. */
const SWEEP_EVERY_MS = 60_000;

/**
 * A {@link BudgetStore} in this process's memory: right for one instance. Ended windows
 * are dropped while it is used, with no timer, so it never keeps a process alive. One
 * instance may serve several routers of one process; they then share the budgets.
 */
export class MemoryBudgetStore implements BudgetStore {
  readonly #windows = new Map<string, Window>();
  #nextSweep = 0;

  async take(key: string, count: number, limit: number, windowMs: number): Promise<BudgetTake> {
    const now = Date.now();
    this.#sweep(now);
    let window = this.#windows.get(key);
    if (window === undefined || window.resetAt <= now) window = { used: 0, resetAt: now + windowMs };
    if (window.used + count > limit) return { taken: false, used: window.used, resetTime: new Date(window.resetAt) };
    window.used += count;
    this.#windows.set(key, window);
    return { taken: true, used: window.used, resetTime: new Date(window.resetAt) };
  }

  async reset(key: string): Promise<void> {
    this.#windows.delete(key);
  }

  #sweep(now: number): void {
    if (now < this.#nextSweep) return;
    this.#nextSweep = now + SWEEP_EVERY_MS;
    for (const [key, window] of this.#windows) if (window.resetAt <= now) this.#windows.delete(key);
  }
}

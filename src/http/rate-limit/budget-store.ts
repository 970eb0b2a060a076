/**
 * The message budget's store contract, and its in-process implementation. An
 * express-rate-limit `Store` only adds one per call; a budget must add a whole batch, and
 * only when all of it fits, so it has a contract of its own.
 */
import { FixedWindows } from './memory-windows.js';

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
   * `windowMs`. May answer synchronously (an in-process store) or with a promise.
   */
  take(key: string, count: number, limit: number, windowMs: number): Promise<BudgetTake> | BudgetTake;
  /** Forgets `key`'s count. */
  reset?(key: string): Promise<void>;
}

/**
 * A {@link BudgetStore} in this process's memory: right for one instance. Ended windows
 * are dropped while it is used, with no timer, so it never keeps a process alive. One
 * instance may serve several routers of one process; they then share the budgets.
 */
export class MemoryBudgetStore implements BudgetStore {
  readonly #windows = new FixedWindows();

  /** Synchronous, as the contract allows: no promise turn per request. */
  take(key: string, count: number, limit: number, windowMs: number): BudgetTake {
    const window = this.#windows.open(key, windowMs);
    const taken = window.totalHits + count <= limit;
    if (taken) window.totalHits += count;
    return { taken, used: window.totalHits, resetTime: window.resetTime };
  }

  async reset(key: string): Promise<void> {
    this.#windows.delete(key);
  }
}

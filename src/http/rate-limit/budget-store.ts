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
 * both fit into the same remaining room. The router takes a request's messages before it
 * stores them (so that racing requests cannot overshoot together) and gives them back with
 * `giveBack` when the request is then refused or fails: the budget counts what was stored.
 * A store without `giveBack` keeps counting such messages. A store does not promise to keep
 * counts across a restart unless its backend does.
 */
export interface BudgetStore {
  /**
   * Adds `count` to `key`'s count in its current window if the sum stays at or under
   * `limit`; otherwise changes nothing. A key without a running window starts one of
   * `windowMs`. May answer synchronously (an in-process store) or with a promise.
   */
  take(key: string, count: number, limit: number, windowMs: number): Promise<BudgetTake> | BudgetTake;
  /**
   * Takes `count` back off `key`'s count in its running window, never below 0; a key with
   * no running window is left alone. Called for messages taken whose request stored none of
   * them. Should the window have ended in between and another begun, that one is given them:
   * at most one request's messages counted short, which a store need not prevent. May answer
   * synchronously or with a promise.
   */
  giveBack?(key: string, count: number): Promise<void> | void;
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

  /** Synchronous, as `take`. */
  giveBack(key: string, count: number): void {
    const window = this.#windows.current(key);
    if (window !== undefined) window.totalHits = Math.max(0, window.totalHits - count);
  }

  async reset(key: string): Promise<void> {
    this.#windows.delete(key);
  }
}

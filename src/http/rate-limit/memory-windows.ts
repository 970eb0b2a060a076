/**
 * Fixed-window counters in this process's memory, and `MemoryRateLimitStore`, the default
 * express-rate-limit `Store` of the request and failed-auth limits, built on them.
 */
import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';

/** One key's running window: its count and when it ends. */
export interface CounterWindow extends ClientRateLimitInfo {
  /** What was counted in this window. */
  totalHits: number;
  /** When the window ends (made once per window, not per read). */
  resetTime: Date;
  /** The same, epoch ms: compared on every call, without a call into Date. */
  resetAt: number;
}

/** How often at most a map of windows is walked to drop ended ones, ms. */
const SWEEP_EVERY_MS = 60_000;

/**
 * Counts per key in fixed windows. Ended windows are dropped while it is used, with no
 * timer, so it never keeps a process alive; every call is synchronous.
 */
export class FixedWindows {
  readonly #windows = new Map<string, CounterWindow>();
  #nextSweep = 0;

  /** `key`'s running window, or `undefined` when it has none. */
  current(key: string, now = Date.now()): CounterWindow | undefined {
    const window = this.#windows.get(key);
    return window === undefined || window.resetAt <= now ? undefined : window;
  }

  /** `key`'s running window, or a new empty one of `windowMs` from `now`. */
  open(key: string, windowMs: number, now = Date.now()): CounterWindow {
    this.#sweep(now);
    let window = this.current(key, now);
    if (window === undefined) {
      window = { totalHits: 0, resetTime: new Date(now + windowMs), resetAt: now + windowMs };
      this.#windows.set(key, window);
    }
    return window;
  }

  /** Forgets `key`'s window. */
  delete(key: string): void {
    this.#windows.delete(key);
  }

  /** Forgets every window. */
  clear(): void {
    this.#windows.clear();
  }

  #sweep(now: number): void {
    if (now < this.#nextSweep) return;
    this.#nextSweep = now + SWEEP_EVERY_MS;
    for (const [key, window] of this.#windows) if (window.resetAt <= now) this.#windows.delete(key);
  }
}

/**
 * An express-rate-limit `Store` in this process's memory: right for one instance, and the
 * default of the `requests` and `failed-auth` limits. It counts as express-rate-limit's
 * `MemoryStore` does (a fixed window per key from its first hit), but answers synchronously,
 * as the `Store` contract allows: `MemoryStore`'s methods are `async`, and the promise turn
 * each of them costs on every request is measurable against the 5% of a request that all
 * three limiters together may cost. It also needs no timer.
 */
export class MemoryRateLimitStore implements Store {
  readonly #windows = new FixedWindows();
  #windowMs = 60_000;

  /** Counts live in this process only, as with express-rate-limit's `MemoryStore`. */
  readonly localKeys = true;

  /** Takes the window length from the limiter's options. */
  init(options: Pick<Options, 'windowMs'>): void {
    this.#windowMs = options.windowMs;
  }

  /** `key`'s count in its running window, or `undefined` when it has none. */
  get(key: string): ClientRateLimitInfo | undefined {
    return this.#windows.current(key);
  }

  /** Adds one hit to `key`'s window (starting one if needed) and returns the window. */
  increment(key: string): ClientRateLimitInfo {
    const window = this.#windows.open(key, this.#windowMs);
    window.totalHits++;
    return window;
  }

  /** Takes one hit back from `key`'s running window. */
  decrement(key: string): void {
    const window = this.#windows.current(key);
    if (window !== undefined && window.totalHits > 0) window.totalHits--;
  }

  /** Forgets `key`'s count. */
  resetKey(key: string): void {
    this.#windows.delete(key);
  }

  /** Forgets every count. */
  resetAll(): void {
    this.#windows.clear();
  }
}

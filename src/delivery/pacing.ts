/**
 * Submit pacing: who may send the next part, and when. A paced adapter asks its pacer for a
 * permit before each send, however many connections it sends on, so `tps` is the
 * adapter's (the account's), not each connection's. A local pacer keeps the rate in this
 * process; a shared one takes permits from one schedule every instance uses
 * ({@link SubmitPermits}, e.g. in Redis) and paces itself locally while that store is down.
 */
import type { SubmitPermits } from './redis-submit-permits.js';

/** Hands out permits to send, at most `perSecond` a second. */
export interface SubmitPacer {
  /** The most permits a second. */
  readonly perSecond: number;
  /** Takes a permit when one is free now; false when the caller must wait for {@link whenFree}. */
  tryTake(): boolean;
  /** Calls `wake` once, when a permit may be free (the caller then tries again). */
  whenFree(wake: () => void): void;
  /** Clears every timer; waiting callers are not woken. */
  close(): void;
}

/** Wakes its callers all at once, from one timer. */
class Wakers {
  readonly #wakers = new Set<() => void>();
  #timer: NodeJS.Timeout | null = null;

  add(wake: () => void): void {
    this.#wakers.add(wake);
  }

  /** Wakes everyone after `ms` (keeps an earlier timer already set). */
  after(ms: number): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.wakeAll();
    }, ms);
    this.#timer.unref();
  }

  wakeAll(): void {
    const wakers = [...this.#wakers];
    this.#wakers.clear();
    for (const wake of wakers) wake();
  }

  clear(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#wakers.clear();
  }
}

/** Paces this process alone: one permit every `1 / perSecond` seconds. */
export class LocalPacer implements SubmitPacer {
  readonly perSecond: number;
  readonly #interval: number;
  #nextAt = 0;
  readonly #wakers = new Wakers();

  /** `perSecond` must be positive and finite. */
  constructor(perSecond: number) {
    this.perSecond = perSecond;
    this.#interval = 1000 / perSecond;
  }

  /** Takes the permit when its time has come. */
  tryTake(): boolean {
    const now = Date.now();
    if (now < this.#nextAt) return false;
    // A pace timer fires a little late. Counted from when the send was due, not from now,
    // the lateness is made up by the next sends and the rate stays at perSecond (from now
    // it lost ~10% at 200 a second); after a longer idle the pace restarts from now, so no
    // burst makes up for the idle time.
    this.#nextAt = (now - this.#nextAt > this.#interval ? now : this.#nextAt) + this.#interval;
    return true;
  }

  /** Wakes `wake` when the next permit is due. */
  whenFree(wake: () => void): void {
    this.#wakers.add(wake);
    this.#wakers.after(Math.max(0, this.#nextAt - Date.now()));
  }

  /** Clears its timer. */
  close(): void {
    this.#wakers.clear();
  }
}

/** How long the shared pacer paces locally after its store failed, before it asks again, ms. */
const SHARED_RETRY_MS = 1_000;

/**
 * Paces by a shared schedule: reserves a slot in it, waits for the slot, then hands out the
 * permit. At most a hundredth of a second of slots is reserved ahead (one at least), so an
 * instance books only what it is about to send. While the store fails, paces locally at
 * `fallbackPerSecond` (the instance's share) and reports the failure once per outage.
 */
export class SharedPacer implements SubmitPacer {
  readonly perSecond: number;
  readonly #permits: SubmitPermits;
  readonly #fallback: LocalPacer;
  readonly #onError: (error: unknown) => void;
  readonly #lookahead: number;
  readonly #wakers = new Wakers();
  readonly #timers = new Set<NodeJS.Timeout>();
  /** Permits whose slot has come. */
  #ready = 0;
  /** Reservations asked for or waited out, not yet ready. */
  #pending = 0;
  /** Until when the store is not asked (it failed), epoch ms. */
  #localUntil = 0;
  #closed = false;

  /** `onError` hears the store's first failure of each outage. */
  constructor(permits: SubmitPermits, fallbackPerSecond: number, onError: (error: unknown) => void) {
    this.perSecond = permits.tps;
    this.#permits = permits;
    this.#fallback = new LocalPacer(fallbackPerSecond);
    this.#onError = onError;
    this.#lookahead = Math.max(1, Math.ceil(permits.tps / 100));
  }

  /** Takes a permit whose slot has come; while the store is down, a local one. */
  tryTake(): boolean {
    if (this.#ready > 0) {
      this.#ready--;
      return true;
    }
    return Date.now() < this.#localUntil ? this.#fallback.tryTake() : false;
  }

  /** Reserves slots ahead (up to the lookahead) and wakes `wake` when one has come. */
  whenFree(wake: () => void): void {
    if (Date.now() < this.#localUntil) {
      this.#fallback.whenFree(wake);
      return;
    }
    this.#wakers.add(wake);
    while (this.#pending < this.#lookahead) this.#reserve();
  }

  /** Clears every timer; slots reserved and not used are left to pass. */
  close(): void {
    this.#closed = true;
    this.#wakers.clear();
    this.#fallback.close();
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  #reserve(): void {
    this.#pending++;
    this.#permits.reserve().then(
      (waitMs) => {
        if (this.#closed) return;
        const timer = setTimeout(() => {
          this.#timers.delete(timer);
          this.#pending--;
          this.#ready++;
          this.#wakers.wakeAll();
        }, waitMs);
        timer.unref();
        this.#timers.add(timer);
      },
      (error: unknown) => {
        this.#pending--;
        if (this.#closed) return;
        const outageStarts = Date.now() >= this.#localUntil + SHARED_RETRY_MS;
        this.#localUntil = Date.now() + SHARED_RETRY_MS;
        if (outageStarts) this.#onError(new Error('Shared submit rate unavailable; pacing this instance at its own share meanwhile', { cause: error }));
        this.#wakers.wakeAll();
      },
    );
  }
}

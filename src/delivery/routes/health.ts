/**
 * Whether a route's carrier can take messages, from what its adapter reports: its
 * connections (the `connection` changes) and its throttled refusals. A route is down while
 * every connection that submits is unbound, or after `throttleLimit` throttled refusals in
 * a row until the carrier's `retryAfterMs` has passed; then it is tried again.
 */
import type { ConnectionChange } from '../contract.js';

/** Why a route is down, or `null` while it is up. */
export type RouteDown = 'unbound' | 'throttled' | null;

/** A receiver bind carries receipts only: its state says nothing of whether submits go out. */
const isReceiver = (bind: string): boolean => bind === 'receiver' || bind.startsWith('receiver.');

/** One route's health. */
export class RouteHealth {
  readonly #throttleLimit: number;
  /** The submitting connections the adapter reported, and whether each is bound. */
  readonly #binds = new Map<string, boolean>();
  #throttles = 0;
  #throttledUntil = 0;

  /** `throttleLimit`: throttled refusals in a row that take the route down. */
  constructor(throttleLimit: number) {
    this.#throttleLimit = throttleLimit;
  }

  /**
   * Why the route is down now, or `null`. An adapter that reported no connection counts as
   * up: it may connect on demand, or have none.
   */
  down(now: number): RouteDown {
    if (this.#binds.size > 0 && ![...this.#binds.values()].some(Boolean)) return 'unbound';
    if (now < this.#throttledUntil) return 'throttled';
    return null;
  }

  /** When a throttled route is tried again (epoch ms; 0 when it is not throttled). */
  get throttledUntil(): number {
    return this.#throttledUntil;
  }

  /** A connection came up or went down. */
  connection(change: ConnectionChange): void {
    if (!isReceiver(change.bind)) this.#binds.set(change.bind, change.state === 'bound');
  }

  /** The carrier accepted a part; returns true when that ends a throttled spell. */
  accepted(): boolean {
    const wasThrottled = this.#throttledUntil !== 0;
    this.#throttles = 0;
    this.#throttledUntil = 0;
    return wasThrottled;
  }

  /**
   * The carrier refused a part, retryably; `retryAfterMs` set means it throttled. Returns
   * true when that takes the route down.
   */
  refused(retryAfterMs: number | null, now: number): boolean {
    if (retryAfterMs === null) return false;
    this.#throttles++;
    if (this.#throttles < this.#throttleLimit) return false;
    this.#throttledUntil = now + Math.max(retryAfterMs, 1);
    return true;
  }
}

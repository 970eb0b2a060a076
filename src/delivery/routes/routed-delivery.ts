/**
 * `RoutedDelivery`: one delivery adapter over several carriers. Each message goes to the
 * route its profile, its recipient's longest prefix, a host function or the default names;
 * while a route is down its messages go to its fallback, and come back once it is up.
 *
 * What it promises: every part of a message goes on the route its first part took, while
 * that route is up; carrier ids are qualified with the route's name (`route:id`) in what
 * `submit` returns and in every receipt, so two carriers issuing the same id never match
 * each other's receipts. What it does not promise: that a part a route lost in flight (its
 * connection dropped before the carrier answered) was not delivered by that carrier when
 * the fallback sends it again (submission is at-least-once, as on one carrier).
 */
import {
  DeliveryError,
  type ConnectionChange,
  type DeliveryAdapter,
  type DeliveryHandlers,
  type BindStatus,
  type OutgoingPart,
  type RouteChange,
  type SubmitAck,
} from '../contract.js';
import { qualifyCarrierId } from '../carrier-ids.js';
import { outcome } from '../../lifecycle/states.js';
import { RouteHealth, type RouteDown } from './health.js';
import { resolveRoutes, ruleRoute, type RoutedDeliveryOptions, type RouteTable } from './options.js';

/** Multipart messages whose route is remembered at most (the oldest forgotten first). */
const PINNED_MAX = 10_000;

/** A route's state as {@link RoutedDelivery.routeStates} gives it. */
export interface RouteState {
  /** `up`, or `down` with why. */
  state: 'up' | 'down';
  /** Why it is down. */
  reason?: 'unbound' | 'throttled';
  /** Where its messages go: itself while up, else the first fallback that is up (`null`: none). */
  via: string | null;
}

/**
 * Routes each message to one of several delivery adapters; see the module notes. Build it
 * with {@link RoutedDeliveryOptions}; pass it as the router's `delivery`.
 */
export class RoutedDelivery implements DeliveryAdapter {
  readonly #table: RouteTable;
  readonly #health = new Map<string, RouteHealth>();
  /** Each multipart message's route, once a part went on it, until its last part did. */
  readonly #pinned = new Map<string, string>();
  /** What each route's state was last reported as. */
  readonly #reported = new Map<string, string>();
  readonly #started = new Set<string>();
  #handlers: DeliveryHandlers | null = null;
  #throttleTimer: NodeJS.Timeout | null = null;
  #closing = false;

  /** Checks the routes; throws an `OptionError` naming a bad one. Nothing connects before `start`. */
  constructor(options: RoutedDeliveryOptions) {
    this.#table = resolveRoutes(options);
    for (const name of this.#table.routes.keys()) this.#health.set(name, new RouteHealth(this.#table.throttleLimit));
  }

  /**
   * The sum of the routes' `submitsPerSecond` when every route paces itself; otherwise
   * none (a route without a pace takes all it is given).
   */
  get submitsPerSecond(): number | undefined {
    let sum = 0;
    for (const { delivery } of this.#table.routes.values()) {
      const pace = delivery.submitsPerSecond;
      if (pace === undefined || !(pace > 0)) return undefined;
      sum += pace;
    }
    return sum;
  }

  /**
   * The longest of the routes' `receiptDeadlineMs` when every route has one; otherwise none
   * (a route without a deadline can take as long as its carrier likes, and any message may
   * have gone through it after a fallback).
   */
  get receiptDeadlineMs(): number | undefined {
    let longest = 0;
    for (const { delivery } of this.#table.routes.values()) {
      const deadline = delivery.receiptDeadlineMs;
      if (deadline === undefined || !(deadline > 0)) return undefined;
      longest = Math.max(longest, deadline);
    }
    return longest;
  }

  /** Every route's state now, by name. */
  routeStates(): Record<string, RouteState> {
    const now = Date.now();
    return Object.fromEntries([...this.#table.routes.keys()].map((name) => [name, this.#state(name, now)]));
  }

  /**
   * Starts every route's adapter. A route whose start failed is started again by the next
   * call (the router calls `start` again after a failed start); the others are not.
   */
  async start(handlers: DeliveryHandlers): Promise<void> {
    this.#handlers = handlers;
    const starting = [...this.#table.routes.values()]
      .filter((route) => !this.#started.has(route.name))
      .map(async (route) => {
        await route.delivery.start(this.#childHandlers(route.name));
        this.#started.add(route.name);
      });
    await Promise.all(starting);
    this.#reportChanges();
  }

  /** Submits the part on its route (or the first fallback up); the carrier id comes back qualified. */
  async submit(part: OutgoingPart): Promise<SubmitAck> {
    if (this.#closing) throw new DeliveryError('RoutedDelivery is closed');
    const chosen = this.#pinned.get(part.ref) ?? (await this.#choose(part));
    const route = this.#table.routes.get(this.#via(chosen, Date.now()) ?? chosen)!;
    let ack: SubmitAck;
    try {
      ack = await route.delivery.submit(part);
    } catch (error) {
      this.#refused(route.name, part, error);
      throw error;
    }
    if (this.#health.get(route.name)!.accepted()) this.#reportChanges();
    this.#pin(part, route.name);
    return { ...ack, carrierId: qualifyCarrierId(route.name, ack.carrierId), route: route.name };
  }

  /** Every route's connections ({@link DeliveryAdapter.status}), each with its route; a route whose adapter has no `status` adds none. */
  status(): BindStatus[] {
    const all: BindStatus[] = [];
    for (const { name, delivery } of this.#table.routes.values()) {
      for (const bind of delivery.status?.() ?? []) all.push({ ...bind, route: name });
    }
    return all;
  }

  /**
   * The route a message of first part `part` would take now ({@link DeliveryAdapter.routeFor}):
   * the one its rules (or the host's function) give, or the first of its fallbacks up while
   * it is down; `null` when none would take it, or the host's function failed.
   */
  async routeFor(part: OutgoingPart): Promise<string | null> {
    let chosen: string;
    try {
      chosen = this.#pinned.get(part.ref) ?? (await this.#choose(part));
    } catch {
      return null;
    }
    return this.#via(chosen, Date.now());
  }

  /** Closes every route's adapter; idempotent. */
  async close(): Promise<void> {
    this.#closing = true;
    if (this.#throttleTimer) clearTimeout(this.#throttleTimer);
    this.#throttleTimer = null;
    this.#pinned.clear();
    await Promise.all([...this.#table.routes.values()].map((route) => route.delivery.close()));
  }

  /** The route a message's first part decides: the host's function, the rules, or a refusal. */
  async #choose(part: OutgoingPart): Promise<string> {
    if (this.#table.select) {
      let selected: unknown;
      try {
        selected = await this.#table.select(part);
      } catch (error) {
        throw new DeliveryError(`RoutedDelivery: the route function failed for ${part.recipient}; retried`, { cause: error });
      }
      if (typeof selected === 'string' && this.#table.routes.has(selected)) return selected;
      if (selected !== null && selected !== undefined) {
        // A host's mistake that a fix and a restart mend: retried, not ended.
        const error = new DeliveryError(`RoutedDelivery: the route function answered ${JSON.stringify(selected)}, which is no route; retried`);
        this.#report(error);
        throw error;
      }
    }
    const ruled = ruleRoute(this.#table, part);
    if (ruled !== null) return ruled;
    const reason = `No route for recipient ${part.recipient}`;
    throw new DeliveryError(reason, { permanent: true, outcome: outcome('rejected', 'delivery_impossible', reason) });
  }

  /** The first route of `name`'s chain that is up, or `null` when none is. */
  #via(name: string, now: number): string | null {
    for (const candidate of this.#table.routes.get(name)!.chain) {
      if (this.#health.get(candidate)!.down(now) === null) return candidate;
    }
    return null;
  }

  #state(name: string, now: number): RouteState {
    const down: RouteDown = this.#health.get(name)!.down(now);
    if (down === null) return { state: 'up', via: name };
    return { state: 'down', reason: down, via: this.#via(name, now) };
  }

  /** Remembers the route of a multipart message until its last part went. */
  #pin(part: OutgoingPart, route: string): void {
    if (part.count <= 1) return;
    if (part.index >= part.count - 1) {
      this.#pinned.delete(part.ref);
      return;
    }
    this.#pinned.delete(part.ref);
    this.#pinned.set(part.ref, route);
    if (this.#pinned.size > PINNED_MAX) {
      const oldest = this.#pinned.keys().next();
      if (oldest.done !== true) this.#pinned.delete(oldest.value);
    }
  }

  #refused(route: string, part: OutgoingPart, error: unknown): void {
    if (DeliveryError.is(error) && error.permanent) {
      this.#pinned.delete(part.ref);
      return;
    }
    const retryAfterMs = DeliveryError.is(error) ? error.retryAfterMs : null;
    if (this.#health.get(route)!.refused(retryAfterMs, Date.now())) this.#reportChanges();
  }

  #childHandlers(route: string): DeliveryHandlers {
    const handlers = () => this.#handlers!;
    return {
      receipt: (receipt) => handlers().receipt({ ...receipt, carrierId: qualifyCarrierId(route, receipt.carrierId) }),
      inbound: (message) => handlers().inbound(message),
      error: (error) => handlers().error(error),
      connection: (change: ConnectionChange) => {
        this.#health.get(route)!.connection(change);
        const parent = handlers();
        if (parent.connection) parent.connection({ ...change, route });
        else if (change.state === 'unbound') parent.error(change.error);
        this.#reportChanges();
      },
    };
  }

  /** Tells `handlers.route` of every route whose state or fallback changed. */
  #reportChanges(): void {
    const handlers = this.#handlers;
    if (!handlers || this.#closing) return;
    const now = Date.now();
    let nextThrottleEnd = Infinity;
    for (const name of this.#table.routes.keys()) {
      const state = this.#state(name, now);
      const until = this.#health.get(name)!.throttledUntil;
      if (until > now) nextThrottleEnd = Math.min(nextThrottleEnd, until);
      const key = `${state.state}/${state.reason ?? ''}/${state.via ?? ''}`;
      if (this.#reported.get(name) === key) continue;
      this.#reported.set(name, key);
      const change: RouteChange =
        state.state === 'up' ? { route: name, state: 'up' } : { route: name, state: 'down', reason: state.reason!, via: state.via };
      try {
        handlers.route?.(change);
      } catch {
        // A throwing handler must not break routing.
      }
    }
    // A throttled route comes back when its time is up, without a submit to notice it.
    if (this.#throttleTimer) clearTimeout(this.#throttleTimer);
    this.#throttleTimer = null;
    if (nextThrottleEnd !== Infinity) {
      this.#throttleTimer = setTimeout(() => this.#reportChanges(), nextThrottleEnd - now + 1);
      this.#throttleTimer.unref();
    }
  }

  #report(error: unknown): void {
    try {
      this.#handlers?.error(error);
    } catch {
      // A throwing error handler must not break routing.
    }
  }
}

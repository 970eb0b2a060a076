/**
 * The console's carrier panel: each bind's state (bound, or down since when, after how many
 * attempts, why, next try), each route's (`up`, or `down` and where its traffic goes), and
 * the submissions per second in use over the last ten seconds. Kept from the router's
 * `carrier.connection`, `carrier.route` and `message.submitted` events: what the adapter's
 * own read-out (`status()`) does not tell, and all there is for an adapter without one.
 */
import type { SmsRouter } from '../router/create-router.js';

/** One bind as the panel shows it. */
export interface BindState {
  /** `<route>/<bind>` with routes, else the bind's name. */
  name: string;
  state: 'bound' | 'unbound';
  /** When it entered this state, epoch ms. */
  since: number;
  /** Failed attempts in a row (unbound only). */
  attempt: number | null;
  /** Why it is down, in one line (unbound only). */
  error: string | null;
  /** When the next attempt is due, epoch ms (unbound only, when known). */
  retryAt: number | null;
}

/** One route as the panel shows it. */
export interface RouteState {
  route: string;
  state: 'up' | 'down';
  since: number;
  reason: string | null;
  via: string | null;
}

/** The panel's content. */
export interface CarrierPanel {
  binds: BindState[];
  routes: RouteState[];
  /** Parts submitted per second over the last {@link TPS_WINDOW_MS}, by this process. */
  tps: number;
}

/** The span the TPS in use is measured over. */
export const TPS_WINDOW_MS = 10_000;

/** An error in one line. */
function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message || error.name : String(error);
  return text.replace(/\s+/g, ' ').slice(0, 200);
}

/** Watches the carrier's events. */
export class CarrierWatch {
  readonly #binds = new Map<string, BindState>();
  readonly #routes = new Map<string, RouteState>();
  /** Submission times (epoch ms) within the TPS window, oldest first. */
  #submitted: number[] = [];

  constructor(
    sms: SmsRouter,
    private readonly now: () => number = Date.now,
  ) {
    sms.on('carrier.connection', (event) => {
      const name = event.route === undefined ? event.bind : `${event.route}/${event.bind}`;
      const known = this.#binds.get(name);
      const at = this.now();
      const since = known !== undefined && known.state === event.state ? known.since : at;
      this.#binds.set(
        name,
        event.state === 'bound'
          ? { name, state: 'bound', since, attempt: null, error: null, retryAt: null }
          : { name, state: 'unbound', since, attempt: event.attempt, error: oneLine(event.error), retryAt: event.retryInMs === undefined ? null : at + event.retryInMs },
      );
    });
    sms.on('carrier.route', (event) => {
      const known = this.#routes.get(event.route);
      const since = known !== undefined && known.state === event.state ? known.since : this.now();
      this.#routes.set(event.route, { route: event.route, state: event.state, since, reason: event.reason ?? null, via: event.via ?? null });
    });
    sms.on('message.submitted', ({ message }) => {
      const at = this.now();
      for (let part = 0; part < Math.max(1, message.parts.length); part += 1) this.#submitted.push(at);
      this.#trim(at);
    });
  }

  #trim(at: number): void {
    const from = at - TPS_WINDOW_MS;
    let drop = 0;
    while (drop < this.#submitted.length && this.#submitted[drop]! < from) drop += 1;
    if (drop > 0) this.#submitted = this.#submitted.slice(drop);
  }

  /** The panel now. */
  current(): CarrierPanel {
    this.#trim(this.now());
    return {
      binds: [...this.#binds.values()].map((bind) => ({ ...bind })),
      routes: [...this.#routes.values()].map((route) => ({ ...route })),
      tps: Math.round((this.#submitted.length / (TPS_WINDOW_MS / 1000)) * 10) / 10,
    };
  }
}

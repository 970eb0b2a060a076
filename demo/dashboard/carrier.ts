/**
 * The dashboard's carrier line: which carrier the demo sends through and the state of each
 * of its connections (bound, or down since when, how many attempts, why, next try), kept
 * from the router's `carrier.connection` events, so a page that opens during an outage
 * shows it at once.
 */
import type { CarrierConnectionEvent, SmsRouter } from '../../src/index.js';

/** One connection as the page shows it. */
export interface CarrierConnection {
  /** `<route>/<bind>` with routes, else the bind (`transceiver`, `simulator`, ...). */
  name: string;
  /** `connecting` until its first event. */
  state: 'connecting' | 'bound' | 'unbound';
  /** When it entered this state, epoch ms. */
  since: number;
  /** Failed attempts in a row (unbound only). */
  attempt: number | null;
  /** Why it is down, in one line (unbound only). */
  error: string | null;
  /** When the next attempt is due, epoch ms, if known (unbound only). */
  retryAt: number | null;
}

/** What the page's carrier line gets. */
export interface CarrierSnapshot {
  /** The carrier in words: `simulated carrier`, or the SMSC's address without credentials. */
  carrier: string;
  /** Each connection seen, in the order first seen; empty until the first event. */
  connections: CarrierConnection[];
}

/** An error in one line: its message, or what it is. */
function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message || error.name : String(error);
  return text.replace(/\s+/g, ' ').slice(0, 200);
}

/** Keeps the carrier's connection states and tells listeners of each change. */
export class CarrierView {
  readonly #connections = new Map<string, CarrierConnection>();
  readonly #listeners = new Set<(snapshot: CarrierSnapshot) => void>();

  constructor(
    sms: SmsRouter,
    private readonly carrier: string,
    private readonly now: () => number = Date.now,
  ) {
    sms.on('carrier.connection', (event) => this.#changed(event));
  }

  /** The carrier now. */
  current(): CarrierSnapshot {
    return { carrier: this.carrier, connections: [...this.#connections.values()].map((c) => ({ ...c })) };
  }

  /** Calls `listener` after each change; returns the unsubscribe. */
  subscribe(listener: (snapshot: CarrierSnapshot) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(event: CarrierConnectionEvent): void {
    const name = event.route === undefined ? event.bind : `${event.route}/${event.bind}`;
    const known = this.#connections.get(name);
    const at = this.now();
    const since = known !== undefined && known.state === event.state ? known.since : at;
    this.#connections.set(
      name,
      event.state === 'bound'
        ? { name, state: 'bound', since, attempt: null, error: null, retryAt: null }
        : {
            name,
            state: 'unbound',
            since,
            attempt: event.attempt,
            error: oneLine(event.error),
            retryAt: event.retryInMs === undefined ? null : at + event.retryInMs,
          },
    );
    const snapshot = this.current();
    for (const listener of this.#listeners) listener(snapshot);
  }
}

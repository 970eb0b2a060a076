/**
 * The dashboard's last hour: how many of the messages accepted in the last hour are in each
 * state, and the delivery rate, the share of those that ended which were delivered. A
 * cancelled message is no delivery's outcome (its sender took it back), so the rate leaves
 * it out. Kept from the router's events, as the Storage contract has no query that counts
 * by state.
 */
import { isTerminal, PENDING_STATES, TERMINAL_STATES, type MessageState, type SmsRouter } from '../../src/index.js';

/** The window the counts cover, ms. */
export const HOUR_MS = 60 * 60 * 1000;

/** The counts the page shows. */
export interface HourCounts {
  /** Messages accepted in the window, each counted once in its current state. */
  accepted: number;
  /** How many are in each state. */
  states: Record<MessageState, number>;
  /** How many of them ended (reached a terminal state) other than `cancelled`: the rate's whole. */
  finished: number;
  /** How many of them were delivered. */
  delivered: number;
  /** `delivered / finished`, from 0 to 1; `null` while none has ended. */
  deliveryRate: number | null;
  /** The window's start, epoch ms: an hour before `at`. */
  since: number;
  /** When the counts were taken, epoch ms. */
  at: number;
}

/** Called with fresh counts. */
export type CountsListener = (counts: HourCounts) => void;

/**
 * The state of each message accepted in the last hour that this process has heard of,
 * and listeners told of the counts after each change. Changes are coalesced (a burst of a
 * thousand accepts is one update), and the counts are sent again every `refreshMs` while
 * anyone listens, as messages leave the window without an event.
 */
export class HourStats {
  /** ref -> when it was accepted and its state now. */
  readonly #messages = new Map<string, { createdAt: number; state: MessageState }>();
  readonly #listeners = new Set<CountsListener>();
  #pending: NodeJS.Timeout | null = null;
  #refresh: NodeJS.Timeout | null = null;

  constructor(
    sms: SmsRouter,
    private readonly now: () => number = Date.now,
    private readonly coalesceMs = 200,
    private readonly refreshMs = 15_000,
  ) {
    sms.on('message.accepted', ({ message }) => this.#set(message.ref, message.createdAt, message.sendAt == null ? 'queued' : 'scheduled'));
    sms.on('message.status', ({ message }) => this.#set(message.ref, message.createdAt, message.state));
  }

  /** The counts now. */
  counts(): HourCounts {
    const at = this.now();
    const since = at - HOUR_MS;
    const states = Object.fromEntries([...PENDING_STATES, ...TERMINAL_STATES].map((s) => [s, 0])) as Record<MessageState, number>;
    let accepted = 0;
    let finished = 0;
    for (const [ref, m] of this.#messages) {
      if (m.createdAt < since) {
        this.#messages.delete(ref);
        continue;
      }
      accepted += 1;
      states[m.state] += 1;
      if (isTerminal(m.state) && m.state !== 'cancelled') finished += 1;
    }
    const delivered = states.delivered;
    return { accepted, states, finished, delivered, deliveryRate: finished === 0 ? null : delivered / finished, since, at };
  }

  /** Subscribes to the counts; returns the unsubscribe function. */
  subscribe(listener: CountsListener): () => void {
    this.#listeners.add(listener);
    if (this.#refresh === null) {
      this.#refresh = setInterval(() => this.#tell(), this.refreshMs);
      this.#refresh.unref();
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0 && this.#refresh !== null) {
        clearInterval(this.#refresh);
        this.#refresh = null;
      }
    };
  }

  #set(ref: string, createdAt: number, state: MessageState): void {
    const since = this.now() - HOUR_MS;
    if (createdAt < since) return;
    // Drop the oldest as new ones come, so a gateway nobody watches does not grow the map:
    // insertion order is about acceptance order, and counts() drops any that remain.
    for (const [old, m] of this.#messages) {
      if (m.createdAt >= since) break;
      this.#messages.delete(old);
    }
    const known = this.#messages.get(ref);
    // States only move forward: an event of an earlier transition that comes late changes nothing.
    if (known !== undefined && isTerminal(known.state)) return;
    if (known !== undefined && known.state === 'submitted' && state === 'queued') return;
    this.#messages.set(ref, { createdAt, state });
    if (this.#listeners.size === 0 || this.#pending !== null) return;
    this.#pending = setTimeout(() => {
      this.#pending = null;
      this.#tell();
    }, this.coalesceMs);
    this.#pending.unref();
  }

  #tell(): void {
    const counts = this.counts();
    for (const listener of this.#listeners) listener(counts);
  }
}

/**
 * The console's history, counted from the router's events while this process runs. Over
 * the last hour, per minute, and over the last day, per 15 minutes: messages accepted,
 * submitted, delivered and failed, credit units spent (charged less refunded), and the
 * accept-to-submit and submit-to-final latencies (p50, p95). Over the hour only: the
 * delivery rate by country, by endpoint and by route (the route and bind
 * `message.submitted` names), and the queue's depth by class and its oldest wait, the last
 * `queue.depth` sample of each minute (listening makes the router count its queue every
 * 5 s, one `countQueued` call each). The Storage contract has no query that counts by
 * minute, so a restart starts it at zero and another instance's traffic is not in it
 * (docs/dashboard.md says so).
 */
import { isTerminal } from '../lifecycle/states.js';
import { readNumber } from '../numbers/read-number.js';
import type { SmsEvents } from '../observe/events.js';
import type { MessageRecord } from '../storage/message-record.js';
import { TrafficWindow, type Leg, type Percentiles, type Series, type WindowSnapshot } from './traffic-window.js';

/** Minutes kept. */
export const MINUTES = 60;
const MINUTE_MS = 60_000;
/**
 * The day's step: a quarter of an hour, so a short outage still shows as a point of its own
 * while the day stays 96 points (the hour's 60 and the day's 96 steps are all it keeps).
 */
export const DAY_STEP_MS = 15 * MINUTE_MS;
/** The day's steps. */
export const DAY_STEPS = 96;
/** Messages submitted and not yet ended whose route is remembered at most (the oldest forgotten first). */
const ROUTES_KEPT = 10_000;

/** One series per line of the chart, oldest minute first. */
export interface HourHistory {
  /** The start of each minute, epoch seconds (what uPlot's time axis reads). */
  minutes: number[];
  accepted: number[];
  submitted: number[];
  delivered: number[];
  failed: number[];
  /** Credit units charged less refunded. */
  creditSpent: number[];
  /**
   * From acceptance (or, for a scheduled or held message, the time it was due) to its first
   * part's submission, seconds, per minute by when it was submitted.
   */
  acceptToSubmit: Percentiles;
  /** From the first part's submission to the final state, seconds, per minute by when it ended. */
  submitToFinal: Percentiles;
  /** The last 24 hours, per {@link DAY_STEP_MS}: the same counts and latencies. */
  day: WindowSnapshot;
  /** Queued transactional messages at the minute's last sample; `null` for a minute without one. */
  queueTransactional: (number | null)[];
  /** Queued bulk messages, the same way. */
  queueBulk: (number | null)[];
  /** How long the oldest queued message had waited, seconds, the same way (0 when none waited). */
  oldestWaitS: (number | null)[];
  /** Delivered / ended (cancelled left out), by recipient country; the hour's whole. */
  byCountry: RateRow[];
  /** The same by endpoint (`quick`, `premium`). */
  byEndpoint: RateRow[];
  /**
   * The same by what carried it: `route/bind`, the route or the bind, as far as the adapter
   * said; only messages this process submitted.
   */
  byRoute: RateRow[];
}

/** One line of a rate table. */
export interface RateRow {
  key: string;
  delivered: number;
  ended: number;
  /** `delivered / ended`, 0 to 1. */
  rate: number;
}

/** When the first part of `message` went to the carrier, epoch ms; `null` when no part says (a row stored before parts kept their times). */
function firstSubmittedAt(message: MessageRecord): number | null {
  let first: number | null = null;
  for (const part of message.parts) {
    if (part.submittedAt != null && (first === null || part.submittedAt < first)) first = part.submittedAt;
  }
  return first;
}

/** What the history listens to: the router (or any emitter of its events). */
export interface HistorySource {
  on<E extends keyof SmsEvents>(event: E, listener: SmsEvents[E]): unknown;
}

/** Counts per minute over the hour and per quarter hour over the day. */
export class MinuteHistory {
  readonly #hour = new TrafficWindow(MINUTE_MS, MINUTES);
  readonly #day = new TrafficWindow(DAY_STEP_MS, DAY_STEPS);
  /** Outcomes per minute, per country and endpoint: `minute -> key -> [delivered, ended]`. */
  readonly #outcomes = new Map<number, Map<string, [number, number]>>();
  /** The last queue sample of each minute: `[transactional, bulk, oldest wait s]`. */
  readonly #queue = new Map<number, [number, number, number]>();
  /** What carried each message submitted here and not ended yet, by ref. */
  readonly #carriedBy = new Map<string, string>();

  constructor(
    sms: HistorySource,
    private readonly now: () => number = Date.now,
  ) {
    sms.on('message.accepted', ({ message }) => this.#add('accepted', 1));
    sms.on('message.submitted', ({ message, route, bind }) => {
      this.#add('submitted', 1);
      // Measured from when it was due, so a scheduled or quiet-hours wait is not the gateway's.
      const due = Math.max(message.createdAt, message.sendAt ?? 0);
      this.#latency('acceptToSubmit', (firstSubmittedAt(message) ?? this.now()) - due);
      const by = route === undefined ? bind : bind === undefined ? route : `${route}/${bind}`;
      if (by === undefined) return;
      this.#carriedBy.set(message.ref, by);
      if (this.#carriedBy.size > ROUTES_KEPT) this.#carriedBy.delete(this.#carriedBy.keys().next().value!);
    });
    sms.on('message.status', ({ message }) => {
      if (!isTerminal(message.state)) return;
      const by = this.#carriedBy.get(message.ref);
      this.#carriedBy.delete(message.ref);
      if (message.state === 'cancelled') return;
      const submittedAt = firstSubmittedAt(message);
      if (submittedAt !== null) this.#latency('submitToFinal', this.now() - submittedAt);
      const delivered = message.state === 'delivered';
      this.#add(delivered ? 'delivered' : 'failed', 1);
      const country = message.country ?? readNumber(message.recipient, null).country ?? 'unknown';
      this.#outcome(`country:${country}`, delivered);
      this.#outcome(`endpoint:${message.endpoint}`, delivered);
      if (by !== undefined) this.#outcome(`route:${by}`, delivered);
    });
    sms.on('queue.depth', (sample) => {
      const minute = Math.floor(sample.at / MINUTE_MS);
      this.#prune(minute);
      const wait = sample.oldestAcceptedAt === null ? 0 : Math.max(0, Math.round((sample.at - sample.oldestAcceptedAt) / 1000));
      this.#queue.set(minute, [sample.transactional, sample.bulk, wait]);
    });
    sms.on('credit.charged', ({ units }) => this.#add('creditSpent', units));
    sms.on('credit.refunded', ({ units }) => this.#add('creditSpent', -units));
  }

  #minute(): number {
    return Math.floor(this.now() / MINUTE_MS);
  }

  #prune(current: number): void {
    for (const map of [this.#outcomes, this.#queue] as Map<number, unknown>[]) {
      for (const minute of map.keys()) if (minute <= current - MINUTES) map.delete(minute);
    }
  }

  #add(series: Series, n: number): void {
    const now = this.now();
    this.#hour.add(series, n, now);
    this.#day.add(series, n, now);
  }

  #latency(leg: Leg, ms: number): void {
    const now = this.now();
    this.#hour.latency(leg, ms, now);
    this.#day.latency(leg, ms, now);
  }

  #outcome(key: string, delivered: boolean): void {
    const minute = this.#minute();
    let slot = this.#outcomes.get(minute);
    if (slot === undefined) {
      this.#prune(minute);
      slot = new Map();
      this.#outcomes.set(minute, slot);
    }
    const counts = slot.get(key) ?? [0, 0];
    counts[0] += delivered ? 1 : 0;
    counts[1] += 1;
    slot.set(key, counts);
  }

  /** The hour and the day now. */
  snapshot(): HourHistory {
    const now = this.now();
    const current = Math.floor(now / MINUTE_MS);
    this.#prune(current);
    const { starts, stepS: _step, ...hour } = this.#hour.snapshot(now);
    const history: HourHistory = {
      minutes: starts, ...hour, day: this.#day.snapshot(now),
      queueTransactional: [], queueBulk: [], oldestWaitS: [], byCountry: [], byEndpoint: [], byRoute: [],
    };
    for (let minute = current - MINUTES + 1; minute <= current; minute += 1) {
      const queue = this.#queue.get(minute);
      history.queueTransactional.push(queue?.[0] ?? null);
      history.queueBulk.push(queue?.[1] ?? null);
      history.oldestWaitS.push(queue?.[2] ?? null);
    }
    const totals = new Map<string, [number, number]>();
    for (const slot of this.#outcomes.values()) {
      for (const [key, [delivered, ended]] of slot) {
        const sum = totals.get(key) ?? [0, 0];
        totals.set(key, [sum[0] + delivered, sum[1] + ended]);
      }
    }
    for (const [key, [delivered, ended]] of [...totals].sort(([a], [b]) => a.localeCompare(b))) {
      const [kind, name] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
      const rows = kind === 'country' ? history.byCountry : kind === 'route' ? history.byRoute : history.byEndpoint;
      rows.push({ key: name, delivered, ended, rate: delivered / ended });
    }
    return history;
  }
}

/**
 * Spend caps: the SMS units a principal's keys may have stored in a day, or a month, of the
 * router's `spendCaps.timeZone` (`dailyUnits`, `monthlyUnits`; docs/keys.md#spend-caps).
 * The library decides, the storage stores: this file makes a request's counters (the
 * period's key, the units, the cap), the storage adds them in the step that stores the
 * messages unless one would pass its cap (on every instance sharing it), and a refusal is
 * answered 429 `SPEND_CAP_REACHED` with `Retry-After` to the period's end. The request that
 * takes a count to 80% of its cap announces it (`spend_cap.warning`).
 *
 * @module
 */
import { EventError, SmsError } from '../errors.js';
import type { Principal } from '../auth/principal.js';
import { keyGuardsOf } from '../auth/key-guards.js';
import { isCounterLimit } from '../lifecycle/counter-limit.js';
import { SpendCalendar } from '../lifecycle/spend-periods.js';
import type { Emit } from '../observe/events.js';
import type { UnitCounter } from '../storage/counter-record.js';
import type { NewMessage, Storage } from '../storage/contract.js';

/** The `spendCaps` option, resolved. */
export interface SpendCapsConfig {
  /** The IANA zone whose midnight ends a day, and whose first of the month a month. */
  timeZone: string;
}

/** What {@link SpendCapGate} needs. */
export interface SpendCapGateDeps {
  config: SpendCapsConfig;
  storage: Storage;
  emit: Emit;
}

/** One request's counters, with what the answer and the event need of each. */
export interface SpendCounting {
  /** What the storage adds, in this order (the month's first: its refusal outlasts the day's). */
  counters: UnitCounter[];
  /** Per counter, its period. */
  periods: ('day' | 'month')[];
  /** Per counter, when its period ends, epoch ms. */
  endsAt: number[];
  /** The clock when the request was counted. */
  now: number;
}

/** The 80% mark, as a fraction whose parts are integers: compared without rounding. */
const WARN_NUMERATOR = 4;
const WARN_DENOMINATOR = 5;

/** The router's side of spend caps: a request's counters, the answer of a refusal, the 80% event. */
export class SpendCapGate {
  readonly #calendar: SpendCalendar;

  constructor(private readonly deps: SpendCapGateDeps) {
    this.#calendar = new SpendCalendar(deps.config.timeZone);
  }

  /**
   * The counters of `messages` (one request of `principal`'s) at `now`, or `undefined` when
   * the principal has no cap. Throws (a 500, with an `error` event) when it has one and the
   * storage keeps no counters: a cap that is not kept must not pass as kept.
   */
  counting(principal: Principal, messages: readonly NewMessage[], now: number): SpendCounting | undefined {
    const { caps } = keyGuardsOf(principal);
    if (caps.daily === null && caps.monthly === null) return undefined;
    if (this.deps.storage.countedUnits === undefined) {
      throw new EventError('SPEND_CAPS_UNSUPPORTED', `principal ${JSON.stringify(principal.id)} has a spend cap, and the storage keeps no counters (it has no countedUnits)`);
    }
    let units = 0;
    for (const message of messages) units += message.smsCount;
    const periods = this.#calendar.at(now);
    const counting: SpendCounting = { counters: [], periods: [], endsAt: [], now };
    const add = (period: 'day' | 'month', limit: number | null) => {
      if (limit === null) return;
      counting.counters.push({ principalId: principal.id, period: periods[period].key, units, limit });
      counting.periods.push(period);
      counting.endsAt.push(periods[period].endsAt);
    };
    add('month', caps.monthly);
    add('day', caps.daily);
    return counting;
  }

  /** The 429 for an insert a counter refused, or `null` for any other error. */
  refused(error: unknown, counting: SpendCounting | undefined): SmsError | null {
    if (counting === undefined || !isCounterLimit(error)) return null;
    const endsAt = counting.endsAt[error.counter] ?? Math.max(...counting.endsAt);
    return new SmsError('SPEND_CAP_REACHED', undefined, Math.max(1, Math.ceil((endsAt - counting.now) / 1000)));
  }

  /**
   * The request's messages are stored and its counters are at `counted`: announces each
   * count this request took to 80% of its cap. The storage's counts are each request's own
   * (added in one step), so one request per period crosses the mark, whichever instance.
   */
  stored(counting: SpendCounting | undefined, counted: void | readonly number[]): void {
    if (counting === undefined || counted === undefined) return;
    counting.counters.forEach((counter, i) => {
      const after = counted[i];
      if (after === undefined) return;
      const mark = counter.limit * WARN_NUMERATOR;
      if (after * WARN_DENOMINATOR < mark || (after - counter.units) * WARN_DENOMINATOR >= mark) return;
      this.deps.emit('spend_cap.warning', { principalId: counter.principalId, period: counting.periods[i]!, units: after, limit: counter.limit, resetsAt: counting.endsAt[i]! });
    });
  }
}

/**
 * The periods a spend cap counts in (docs/keys.md#spend-caps): the day and the month of a
 * time zone that an instant falls in, each with its key (what the storage's counter is named
 * by, the same on every instance for the same instant and zone) and the instant it ends,
 * the next midnight of that zone (the first instant its clock reads 00:00 or later, where a
 * daylight-saving change skips midnight).
 *
 * @module
 */
import { firstPast, wallClock } from '../numbers/quiet-hours.js';

/** One period: its counter's key and when it ends, epoch ms. */
export interface SpendPeriod {
  /** `day:YYYY-MM-DD` or `month:YYYY-MM`, in the zone's calendar. */
  key: string;
  /** The instant the next period starts. */
  endsAt: number;
}

/** The day and the month an instant falls in. */
export interface SpendPeriods {
  day: SpendPeriod;
  month: SpendPeriod;
  /** When the day began: before it, the periods are another day's. */
  dayStartsAt: number;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/**
 * The first instant from which `zone`'s clock reads `wall` (a wall-clock time written as if
 * it were UTC) or later, near `near`: the offset in force then is not the one at `near`
 * across a daylight-saving change.
 */
function instantOfWall(wall: number, near: number, zone: string): number {
  const offsetNear = wallClock(near, zone) - near;
  const first = wall - offsetNear;
  const offsetThen = wallClock(first, zone) - first;
  if (offsetThen === offsetNear) return first;
  const shifted = wall - offsetThen;
  if (wallClock(shifted, zone) === wall) return shifted;
  return firstPast(Math.min(first, shifted), Math.max(first, shifted), wall, zone);
}

/** The day and the month of `zone` that `at` falls in. */
export function spendPeriodsAt(at: number, zone: string): SpendPeriods {
  const wall = new Date(wallClock(at, zone));
  const year = wall.getUTCFullYear();
  const month = wall.getUTCMonth();
  const date = wall.getUTCDate();
  const monthKey = `${pad(year, 4)}-${pad(month + 1)}`;
  return {
    day: { key: `day:${monthKey}-${pad(date)}`, endsAt: instantOfWall(Date.UTC(year, month, date + 1), at, zone) },
    month: { key: `month:${monthKey}`, endsAt: instantOfWall(Date.UTC(year, month + 1, 1), at, zone) },
    dayStartsAt: instantOfWall(Date.UTC(year, month, date), at, zone),
  };
}

/**
 * {@link spendPeriodsAt} of one zone, worked out again only when the clock leaves the day
 * it last answered for: the send path asks on every capped request.
 */
export class SpendCalendar {
  readonly #zone: string;
  #periods: SpendPeriods | undefined;

  constructor(zone: string) {
    this.#zone = zone;
  }

  /** The periods `at` falls in. */
  at(at: number): SpendPeriods {
    const known = this.#periods;
    if (known !== undefined && at >= known.dayStartsAt && at < known.day.endsAt) return known;
    this.#periods = spendPeriodsAt(at, this.#zone);
    return this.#periods;
  }
}

/** How far the live periods reach either side of now: an instance whose clock runs ahead may already count in the next day. */
const CLOCK_SLACK_MS = 3_600_000;

/**
 * The keys of the periods still counting at `now` in `zone` (the day and the month, and those
 * of an hour before and after, for clocks that differ between instances): every other
 * counter's period has ended, and the retention sweep deletes it.
 */
export function livePeriodKeys(now: number, zone: string): string[] {
  const keys = new Set<string>();
  for (const at of [now - CLOCK_SLACK_MS, now, now + CLOCK_SLACK_MS]) {
    const periods = spendPeriodsAt(at, zone);
    keys.add(periods.day.key);
    keys.add(periods.month.key);
  }
  return [...keys];
}

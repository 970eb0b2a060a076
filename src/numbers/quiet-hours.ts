/**
 * Quiet hours: the local times of day a recipient is not to be disturbed by bulk messages
 * (a profile's `quietHours`, in a time zone), and the instant such a window ends. Local
 * times come from the platform's time zone database (`Intl`), so a window keeps its wall
 * clock across a daylight-saving change.
 */
import { OptionError } from '../errors.js';

/** A daily window of local time, `HH:MM` to `HH:MM`, 24-hour; `from` later than `to` spans midnight. */
export interface QuietHours {
  /** Start of the window, `HH:MM` (included). */
  from: string;
  /** End of the window, `HH:MM` (excluded): held messages are due then. */
  to: string;
}

const HH_MM = /^([01][0-9]|2[0-3]):([0-5][0-9])$/;
const DAY_MINUTES = 1440;
const MINUTE_MS = 60_000;

function minutesOf(time: string): number {
  const match = HH_MM.exec(time)!;
  return Number(match[1]) * 60 + Number(match[2]);
}

/** Throws an `OptionError` unless `value` is `{ from: 'HH:MM', to: 'HH:MM' }` with two different times. */
export function assertQuietHours(where: string, value: unknown): asserts value is QuietHours {
  const hours = value as Partial<QuietHours> | null;
  const ok = typeof hours === 'object' && hours !== null && typeof hours.from === 'string' && typeof hours.to === 'string' && HH_MM.test(hours.from) && HH_MM.test(hours.to);
  if (!ok) throw new OptionError(`${where}: quietHours must be { from: 'HH:MM', to: 'HH:MM' } in 24-hour time, such as { from: '21:00', to: '08:00' }`);
  if (hours.from === hours.to) throw new OptionError(`${where}: quietHours from and to are the same time; leave quietHours out for none`);
  const keys = Object.keys(hours).filter((key) => key !== 'from' && key !== 'to');
  if (keys.length > 0) throw new OptionError(`${where}: quietHours has unknown field ${JSON.stringify(keys[0])}; it takes from and to`);
}

/** Throws an `OptionError` unless `value` is an IANA time zone the platform knows (`Africa/Nairobi`). */
export function assertTimeZone(where: string, value: unknown): asserts value is string {
  try {
    if (typeof value === 'string' && value !== '') {
      formatterFor(value);
      return;
    }
  } catch {
    // Refused below with the name of the option.
  }
  throw new OptionError(`${where}: timeZone must be an IANA time zone such as 'Africa/Nairobi', got ${JSON.stringify(value)}`);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let format = formatters.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, format);
  }
  return format;
}

/** The wall clock of `zone` at `at`, as if it were UTC: its difference from `at` is the zone's offset then. */
export function wallClock(at: number, zone: string): number {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(zone).formatToParts(at)) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
}

/**
 * When the quiet window that `at` falls in ends, epoch ms, or `null` when `at` is outside
 * it. The end is the next instant the zone's clock reads `to`; across a daylight-saving
 * change that is not `to - local time` later, and where the clock skips `to` (it falls in
 * the hour sprung over) it is the instant the clock jumps past it.
 */
export function quietHoursEnd(at: number, hours: QuietHours, zone: string): number | null {
  const from = minutesOf(hours.from);
  const to = minutesOf(hours.to);
  const wall = wallClock(at, zone);
  const minute = Math.floor(wall / MINUTE_MS) % DAY_MINUTES;
  const inside = from < to ? minute >= from && minute < to : minute >= from || minute < to;
  if (!inside) return null;
  // The wall clock's next `to`, then back to an instant by the offset in force at that time.
  const wallEnd = Math.floor(wall / MINUTE_MS) * MINUTE_MS + ((to - minute + DAY_MINUTES) % DAY_MINUTES) * MINUTE_MS;
  const offsetNow = wall - at;
  let end = wallEnd - offsetNow;
  const offsetThen = wallClock(end, zone) - end;
  if (offsetThen !== offsetNow) {
    const shifted = wallEnd - offsetThen;
    end = wallClock(shifted, zone) === wallEnd ? shifted : firstPast(Math.min(end, shifted), Math.max(end, shifted), wallEnd, zone);
  }
  return end > at ? end : null;
}

/**
 * The first minute in [`low`, `high`] whose wall clock reads `wallEnd` or later: the moment a
 * clock that never reads `wallEnd` (it sprang over it) jumps past it.
 */
export function firstPast(low: number, high: number, wallEnd: number, zone: string): number {
  let [lo, hi] = [Math.floor(low / MINUTE_MS), Math.ceil(high / MINUTE_MS)];
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (wallClock(mid * MINUTE_MS, zone) >= wallEnd) hi = mid;
    else lo = mid + 1;
  }
  return lo * MINUTE_MS;
}

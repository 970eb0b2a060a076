/**
 * Reads an RFC 3339 date-time (section 5.6) strictly. `Date.parse` alone takes a format it
 * knows and rolls impossible fields over (`2026-11-31` is December 1, `T24:00:00` the next
 * day), which would schedule a message for a time its sender never wrote.
 */

/** A date, `T` (or a space, which RFC 3339 allows), a time with seconds, and an offset. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/**
 * `text` as epoch ms, or `NaN` when it is not an RFC 3339 date-time whose every field is in
 * range: the day within its month (leap years counted), hours 00-23, minutes and seconds
 * 00-59, an offset's hours 00-23. A leap second (`:60`) is refused too: JavaScript's clock
 * has no such second. Fractions of a second past milliseconds are dropped.
 */
export function parseRfc3339(text: string): number {
  const match = RFC3339.exec(text);
  if (match === null) return Number.NaN;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const offsetHours = match[7] === undefined ? 0 : Number(match[7]);
  const offsetMinutes = match[8] === undefined ? 0 : Number(match[8]);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return Number.NaN;
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return Number.NaN;
  // Every field is in range now, so the built-in parser has nothing left to roll over.
  return Date.parse(text.replace(' ', 'T'));
}

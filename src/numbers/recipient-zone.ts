/**
 * The time zone a recipient's quiet hours are kept in: its country's, when the whole country
 * keeps one clock, else the profile's `timeZone` (docs/numbers.md#quiet-hours). The
 * country's zones come from `countries-and-timezones` (the IANA zone table, maintained
 * upstream, never a table of ours); the clock itself from the platform's zone database.
 */
import { getCountry, getTimezone } from 'countries-and-timezones';

/** Per country: its one clock's zone, or `null` when it has several (or is not known). */
const oneClock = new Map<string, string | null>();

/**
 * The IANA zone of `country` (ISO 3166 alpha-2) when all its zones keep the same clock,
 * or `null` when they do not (the US, Brazil, Spain with the Canaries) or the country is
 * not in the table. Zones that keep the same clock count as one: Germany's are
 * Europe/Berlin and, for Büsingen, Europe/Zurich, both UTC+1 with the same summer time.
 * "The same clock" is the same standard and daylight offsets, and of those the zone named
 * for the country is taken.
 */
export function countryZone(country: string): string | null {
  let zone = oneClock.get(country);
  if (zone === undefined) {
    zone = zoneOf(country);
    oneClock.set(country, zone);
  }
  return zone;
}

function zoneOf(country: string): string | null {
  const zones = getCountry(country)?.timezones.map((name) => getTimezone(name)!) ?? [];
  if (zones.length === 0) return null;
  const [first] = zones;
  if (!zones.every((zone) => zone.utcOffset === first!.utcOffset && zone.dstOffset === first!.dstOffset)) return null;
  // A zone shared by several countries lists first the one it is named for.
  return (zones.find((zone) => zone.countries[0] === country) ?? first!).name;
}

/**
 * The zone whose wall clock decides whether a message to a recipient of `country` is in
 * quiet hours: the country's one clock, else `fallback` (the profile's `timeZone`), else
 * `null` (the recipient's night cannot be told, and the message is not held).
 */
export function recipientZone(country: string | null, fallback: string | null): string | null {
  return (country === null ? null : countryZone(country)) ?? fallback;
}

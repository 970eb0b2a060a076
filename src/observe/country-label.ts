/**
 * The `country` label of the metrics: a message's recipient country as an ISO 3166 alpha-2
 * code, or `unknown`. Only codes of the ISO list pass, so the label has at most some 250
 * values whatever a record carries (a record of an earlier release has no country; a
 * non-geographic number has none; libphonenumber's own `AC`, `TA` and `XK` are not ISO).
 */
import { getAllCountries } from 'countries-and-timezones';

/** The label of a message whose country is not an ISO code. */
export const UNKNOWN_COUNTRY = 'unknown';

const ISO_CODES: ReadonlySet<string> = new Set(Object.keys(getAllCountries()));

/** `country` when it is an ISO 3166 alpha-2 code, else {@link UNKNOWN_COUNTRY}. */
export function countryLabel(country: string | null | undefined): string {
  return country !== null && country !== undefined && ISO_CODES.has(country) ? country : UNKNOWN_COUNTRY;
}

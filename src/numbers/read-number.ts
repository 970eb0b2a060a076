/**
 * Reads a recipient as a carrier would: its international digits, its country and the type
 * of line, from libphonenumber's metadata (maintained upstream, never a table of ours).
 *
 * The `max` metadata is used: it is the one flavour that tells a landline from a mobile in
 * one parse (`min` knows no types, `mobile` cannot tell a landline from an invalid number),
 * at about 75 KB more than `min` (docs/numbers.md#metadata-and-cost). International digits,
 * the seed format and the hot path, are read with its patterns compiled once
 * (international-reading.ts); other writings by libphonenumber-js's own parser.
 */
import { parsePhoneNumberFromString, type CountryCode, type NumberType, type PhoneNumber } from 'libphonenumber-js/max';
import { readInternationalDigits } from './international-reading.js';

/** The seed format: international digits, country code first, no plus sign, 8 to 15 digits. */
const SEED_FORMAT = /^[1-9][0-9]{7,14}$/;

/**
 * What the metadata says of one recipient as written. Independent of any policy: the
 * policy (numbers-policy.ts) decides what of it is acceptable.
 */
export interface NumberReading {
  /** International digits without `+` (`254712345678`), or `null` when nothing could be read. */
  digits: string | null;
  /** ISO 3166 alpha-2 country (`KE`), or `null` (unread, or a non-geographic number). */
  country: string | null;
  /** Line type in lower snake case (`mobile`, `fixed_line`, ...), or `null` when the metadata cannot tell. */
  type: string | null;
  /** A number of a length the country uses. */
  possible: boolean;
  /** A number in a range the country has assigned. */
  valid: boolean;
  /** Written in the seed format (international digits, no `+`). */
  seedFormat: boolean;
}

const UNREAD: NumberReading = { digits: null, country: null, type: null, possible: false, valid: false, seedFormat: false };

function reading(number: PhoneNumber, seedFormat: boolean): NumberReading {
  // With types in the metadata, `isValid()` is "has a type": asking the type first spares a
  // second match of every pattern for the valid numbers, most of those read. A number
  // without a type is still valid where the metadata has no types for its country.
  const type: NumberType = number.getType();
  const valid = type !== undefined || number.isValid();
  return {
    digits: number.number.slice(1),
    country: number.country ?? null,
    type: type === undefined ? null : type.toLowerCase(),
    possible: valid || number.isPossible(),
    valid,
    seedFormat,
  };
}

function parse(text: string, country?: CountryCode): PhoneNumber | undefined {
  // `extract: false`: the whole field is the number, not a text to search for one.
  return country === undefined ? parsePhoneNumberFromString(text, { extract: false }) : parsePhoneNumberFromString(text, { defaultCountry: country, extract: false });
}

/**
 * `raw` (international digits) read by libphonenumber-js itself, or `null` when it reads no
 * number there: what {@link readInternational} answers faster, and is held to in tests.
 */
export function readInternationalByLibrary(raw: string): NumberReading | null {
  const international = parse(`+${raw}`);
  return international === undefined ? null : reading(international, true);
}

/** `raw` (international digits) read with compiled patterns, as libphonenumber-js reads it; `null` when it reads no number. */
function readInternational(raw: string): NumberReading | null {
  const read = readInternationalDigits(raw);
  if (read === undefined) return readInternationalByLibrary(raw);
  return read === null ? null : { digits: raw, country: read.country, type: read.type, possible: read.possible, valid: read.valid, seedFormat: true };
}

function readUncached(raw: string, defaultCountry: string | null): NumberReading {
  const seedFormat = SEED_FORMAT.test(raw);
  if (defaultCountry === null) {
    if (!seedFormat) return UNREAD;
    return readInternational(raw) ?? { ...UNREAD, digits: raw, seedFormat };
  }
  if (raw.startsWith('+')) {
    const written = parse(raw);
    return written === undefined ? UNREAD : reading(written, false);
  }
  // Digits alone are read as international first (the seed format), then as a national
  // number of the default country: the reading the metadata calls valid wins, the
  // international one when both or neither are.
  const international = seedFormat ? readInternational(raw) : null;
  if (international?.valid === true) return international;
  const national = parse(raw, defaultCountry as CountryCode);
  if (national?.isValid() === true) return reading(national, seedFormat);
  if (international !== null) return international;
  return national === undefined ? (seedFormat ? { ...UNREAD, digits: raw, seedFormat } : UNREAD) : reading(national, false);
}

/**
 * Readings kept by the text and default country they were read with: a reading costs a
 * microsecond or more (several patterns are matched), and the same
 * numbers come back (one-time passwords to the same users, a campaign's list sent again).
 * Bounded, oldest dropped first.
 */
const MEMO_LIMIT = 10_000;
const memo = new Map<string, NumberReading>();

/**
 * Reads `raw` as a recipient: in the seed format (international digits without `+`), or,
 * with a `defaultCountry`, also with `+`, spaces and punctuation, or as a national number
 * of that country (`0712345678`). Never throws.
 */
export function readNumber(raw: string, defaultCountry: string | null): NumberReading {
  const key = defaultCountry === null ? raw : `${defaultCountry}:${raw}`;
  const known = memo.get(key);
  if (known !== undefined) return known;
  const read = readUncached(raw, defaultCountry);
  if (memo.size >= MEMO_LIMIT) memo.delete(memo.keys().next().value!);
  memo.set(key, read);
  return read;
}

/** Reads without the memo: for measuring what a number never seen before costs. */
export function readNumberUncached(raw: string, defaultCountry: string | null): NumberReading {
  return readUncached(raw, defaultCountry);
}

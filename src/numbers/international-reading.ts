/**
 * Reads a number written as international digits (the seed format: `254712345678`) the way
 * libphonenumber-js does, with each country's patterns compiled once. libphonenumber-js
 * builds a regular expression for every pattern it tries and copies its options and
 * metadata wrappers on every call: about 90,000 instructions a number never seen, against
 * about 8,000 here, and 100 new numbers a request at that price exceed its 10% budget
 * (docs/numbers.md#metadata-and-cost).
 *
 * The same metadata (`max`) and the same steps are used: the shortest calling code the
 * metadata knows, the country of that code whose leading digits or type patterns take the
 * number, the line type in libphonenumber's order. Where a step would take a path this
 * file does not retrace (a national prefix written after the calling code, a
 * non-geographic code such as +800, a length libphonenumber refuses outright),
 * `undefined` is answered and the caller asks libphonenumber-js itself; a test holds the
 * two to the same answers over numbers of every calling code.
 */
import * as core from 'libphonenumber-js/core';
// The module the `max` entry's parser reads too (ESM and CommonJS alike): one copy in memory.
import metadataJson from 'libphonenumber-js/metadata.max.json';

/** The part of libphonenumber-js's `Metadata` class (exported, not typed) read here. */
interface Metadata {
  hasCallingCode(code: string): boolean;
  getCountryCodesForCallingCode(code: string): string[] | undefined;
  selectNumberingPlan(country: string): Metadata;
  numberingPlan: NumberingPlan;
}

interface NumberingPlan {
  nationalNumberPattern(): string;
  possibleLengths(): number[] | undefined;
  nationalPrefixForParsing(): string | undefined;
  leadingDigits(): string | undefined;
  hasTypes(): boolean;
  type(name: string): { pattern(): string; possibleLengths(): number[] | undefined } | undefined;
}

const MetadataClass = (core as unknown as { Metadata: new (json: unknown) => Metadata }).Metadata;
const metadata = new MetadataClass(metadataJson);

/** libphonenumber's bounds on a national (significant) number's length. */
const MIN_NATIONAL_LENGTH = 2;
const MAX_NATIONAL_LENGTH = 17;
const MAX_CALLING_CODE_LENGTH = 3;

/** The types tried after the fixed line, in libphonenumber's order (helpers/getNumberType.js). */
const NON_FIXED_LINE_TYPES = ['MOBILE', 'PREMIUM_RATE', 'TOLL_FREE', 'SHARED_COST', 'VOIP', 'PERSONAL_NUMBER', 'PAGER', 'UAN', 'VOICEMAIL'] as const;

/** One line type of a country: its pattern, compiled, and the lengths it takes. */
interface CompiledType {
  name: string;
  pattern: RegExp;
  lengths: readonly number[] | undefined;
}

/** A country's numbering plan with its patterns compiled. */
interface CompiledPlan {
  country: string;
  national: RegExp;
  lengths: readonly number[] | undefined;
  /** Matches a national prefix at the start, when the country has one. */
  nationalPrefix: RegExp | null;
  /** The leading digits that pick this country among those of its calling code. */
  leadingDigits: RegExp | null;
  hasTypes: boolean;
  fixedLine: CompiledType | null;
  /** `null` when the plan has no mobile pattern: its fixed lines may then be mobiles. */
  mobile: CompiledType | null;
  others: CompiledType[];
}

const entirely = (pattern: string): RegExp => new RegExp(`^(?:${pattern})$`);

function compiledType(plan: NumberingPlan, name: string): CompiledType | null {
  const type = plan.type(name);
  // A type without a pattern matches nothing (helpers/getNumberType.js `isNumberTypeEqualTo`).
  if (type === undefined || !type.pattern()) return null;
  return { name: name.toLowerCase(), pattern: entirely(type.pattern()), lengths: type.possibleLengths() };
}

function compile(country: string): CompiledPlan {
  const plan = metadata.selectNumberingPlan(country).numberingPlan;
  const prefix = plan.nationalPrefixForParsing();
  const leading = plan.leadingDigits();
  return {
    country,
    national: entirely(plan.nationalNumberPattern()),
    lengths: plan.possibleLengths(),
    nationalPrefix: prefix ? new RegExp(`^(?:${prefix})`) : null,
    leadingDigits: leading ? new RegExp(leading) : null,
    hasTypes: plan.hasTypes(),
    fixedLine: compiledType(plan, 'FIXED_LINE'),
    mobile: compiledType(plan, 'MOBILE'),
    others: NON_FIXED_LINE_TYPES.map((name) => compiledType(plan, name)).filter((type): type is CompiledType => type !== null),
  };
}

const plans = new Map<string, CompiledPlan>();

function planOf(country: string): CompiledPlan {
  let plan = plans.get(country);
  if (plan === undefined) plans.set(country, (plan = compile(country)));
  return plan;
}

function isType(national: string, type: CompiledType | null): boolean {
  if (type === null) return false;
  if (type.lengths !== undefined && !type.lengths.includes(national.length)) return false;
  return type.pattern.test(national);
}

/** The line type of `national` in `plan`, lower case, or `null` (helpers/getNumberType.js). */
function typeOf(national: string, plan: CompiledPlan): string | null {
  if (!plan.national.test(national)) return null;
  if (isType(national, plan.fixedLine)) {
    if (plan.mobile === null || isType(national, plan.mobile)) return 'fixed_line_or_mobile';
    return 'fixed_line';
  }
  for (const type of plan.others) if (isType(national, type)) return type.name;
  return null;
}

/** Which of the countries sharing a calling code `national` belongs to (helpers/getCountryByNationalNumber.js). */
function countryAmong(national: string, countries: readonly string[]): CompiledPlan | null {
  for (const country of countries) {
    const plan = planOf(country);
    if (plan.leadingDigits !== null) {
      if (national.search(plan.leadingDigits) === 0) return plan;
    } else if (typeOf(national, plan) !== null) {
      return plan;
    }
  }
  return null;
}

/** What libphonenumber-js says of an international number, as read-number.ts keeps it. */
export interface InternationalReading {
  /** ISO 3166 alpha-2 country, or `null` (a shared calling code none of whose countries takes the number). */
  country: string | null;
  /** Line type in lower snake case, or `null` when no type pattern takes it. */
  type: string | null;
  /** A length its country uses. */
  possible: boolean;
  /** In a range its country has assigned. */
  valid: boolean;
}

/**
 * What libphonenumber-js (`max` metadata) would say of `+digits`: `null` when it reads no
 * number there (no calling code it knows), `undefined` when this reading does not retrace
 * its steps for such a number and libphonenumber-js must be asked. `digits` is the seed
 * format (international digits, the first not 0): its digits are then the number's.
 */
export function readInternationalDigits(digits: string): InternationalReading | null | undefined {
  let length = 1;
  while (length <= MAX_CALLING_CODE_LENGTH && length <= digits.length && !metadata.hasCallingCode(digits.slice(0, length))) length++;
  if (length > MAX_CALLING_CODE_LENGTH || length > digits.length) return null;
  const countries = metadata.getCountryCodesForCallingCode(digits.slice(0, length));
  if (countries === undefined) return undefined;
  const national = digits.slice(length);
  if (national.length < MIN_NATIONAL_LENGTH || national.length > MAX_NATIONAL_LENGTH) return undefined;
  const main = planOf(countries[0]!);
  // libphonenumber strips a national prefix written after the calling code (or declines to): not retraced.
  if (main.nationalPrefix !== null && main.nationalPrefix.test(national)) return undefined;
  const found = countries.length === 1 ? main : countryAmong(national, countries);
  // A number of a shared calling code that no country takes is judged by the code's main country.
  const plan = found ?? main;
  if (plan.lengths === undefined) return undefined;
  const type = typeOf(national, plan);
  const valid = type !== null || (!plan.hasTypes && plan.national.test(national));
  return { country: found?.country ?? null, type, valid, possible: valid || plan.lengths.includes(national.length) };
}

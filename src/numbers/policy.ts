/**
 * Which recipients a profile (or principal) accepts, and what is wrong with one it does not:
 * the `numbers` and `defaultCountry` settings, checked when profiles are built and applied
 * to each recipient of a request (docs/numbers.md).
 */
import { isSupportedCountry } from 'libphonenumber-js/max';
import { OptionError, type ErrorCode } from '../errors.js';
import type { NumberReading } from './read-number.js';

/**
 * How strictly recipients are checked:
 * - `mobile` (the default): a valid number for its country, of a type that can take SMS
 *   (mobile, fixed-line-or-mobile, or a type the metadata cannot tell);
 * - `valid`: a valid number for its country, of any type;
 * - `possible`: a length its country uses;
 * - `digits`: 8 to 15 digits, as the seed checked.
 */
export type NumberPolicy = 'mobile' | 'valid' | 'possible' | 'digits';

/** Every policy, strictest first. */
export const NUMBER_POLICIES: readonly NumberPolicy[] = ['mobile', 'valid', 'possible', 'digits'];

/** The policy when neither the profile nor the principal sets one. */
export const DEFAULT_NUMBER_POLICY: NumberPolicy = 'mobile';

/** Line types that take SMS: a number of another type the metadata knows is refused under `mobile`. */
const SMS_TYPES: ReadonlySet<string | null> = new Set(['mobile', 'fixed_line_or_mobile', null]);

/** Why a recipient is refused: the error code and the words after the field's name. */
export interface NumberProblem {
  code: ErrorCode;
  problem: string;
}

/** Throws an `OptionError` unless `value` is a {@link NumberPolicy}. */
export function assertNumberPolicy(where: string, value: unknown): asserts value is NumberPolicy {
  if (!NUMBER_POLICIES.includes(value as NumberPolicy)) {
    throw new OptionError(`${where}: numbers must be one of ${NUMBER_POLICIES.map((p) => `'${p}'`).join(', ')}, got ${JSON.stringify(value)}`);
  }
}

/** Throws an `OptionError` unless `value` is an ISO 3166 alpha-2 code the metadata knows (`KE`). */
export function assertCountry(where: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || !isSupportedCountry(value)) {
    throw new OptionError(`${where}: defaultCountry must be an ISO 3166 alpha-2 code in upper case, such as 'KE', got ${JSON.stringify(value)}`);
  }
}

function typeWords(type: string): string {
  return type.replaceAll('_', ' ');
}

/**
 * Why `reading` is not acceptable under `policy`, or `null` when it is. A number that is not
 * in the seed format when no default country was given is not judged here: the seed's own
 * format answer (validate-request.ts `phoneProblem`) says it better.
 */
export function numberProblem(reading: NumberReading, policy: NumberPolicy): NumberProblem | null {
  if (policy === 'digits') return reading.digits !== null && /^[1-9][0-9]{7,14}$/.test(reading.digits) ? null : invalid('is not a phone number');
  if (reading.digits === null) return invalid('is not a phone number');
  const where = reading.country === null ? '' : ` for ${reading.country}`;
  if (!reading.possible) return invalid(`has a length no number${where} has`);
  if (policy === 'possible') return null;
  if (!reading.valid) return invalid(`is not a number in use${where}`);
  if (policy === 'valid' || SMS_TYPES.has(reading.type)) return null;
  return { code: 'NOT_MOBILE', problem: `is a ${typeWords(reading.type!)} number${where}, which cannot take SMS` };
}

function invalid(problem: string): NumberProblem {
  return { code: 'INVALID_RECIPIENT', problem };
}

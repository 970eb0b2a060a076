/**
 * Option typos must fail at construction, not pass silently: `assertKnownKeys` throws with
 * a "did you mean" hint for a key that is not an option.
 */
import { OptionError } from '../errors.js';

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The candidate closest to `name` when it looks like a typo of it (case-insensitive, at most
 * 3 edits), for "did you mean" hints: the one place such hints are computed.
 */
export function nearest(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 4;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/**
 * Throws a TypeError naming `where` if `options` has a key outside `known`, suggesting the
 * closest known key when one is near ({@link nearest}).
 */
export function assertKnownKeys(where: string, options: object, known: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const best = nearest(key, known);
    const hint = best === undefined ? '' : ` Did you mean \`${best}\`?`;
    throw new OptionError(`${where}: unknown option \`${key}\`.${hint}`, 'UNKNOWN_OPTION');
  }
}

/** Throws a TypeError unless `value` is a finite number >= `min` (and an integer if asked). */
export function assertNumber(where: string, value: unknown, min: number, integer = true): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
    throw new OptionError(`${where} must be ${integer ? 'an integer' : 'a number'} >= ${min}, got ${String(value)}`);
  }
}

/**
 * Throws unless `value` is a plain SQL identifier of at most `max` characters (letters,
 * digits and `_`, not starting with a digit), as a name a storage inlines in SQL must be.
 */
export function assertIdentifier(where: string, value: unknown, max: number): asserts value is string {
  if (typeof value !== 'string' || !new RegExp(`^[A-Za-z_][A-Za-z0-9_]{0,${max - 1}}$`).test(value)) {
    throw new OptionError(`${where} must be letters, digits and _ (not starting with a digit, at most ${max}), got ${JSON.stringify(value)}`);
  }
}

/**
 * Throws unless `value` is a usable fair-queue weight: a finite number from 0.01 to 1,000
 * (a tag step of 1/weight stays exact enough in a double for billions of messages).
 */
export function assertWeight(where: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0.01 || value > 1000) {
    throw new OptionError(`${where} must be a number from 0.01 to 1000, got ${String(value)}`);
  }
}

/**
 * Checks an options section whose fields are all integers >= 1 (`undefined`: all defaults)
 * and merges it over `defaults`, naming `where` (with a "did you mean" hint for a typo).
 */
export function resolveIntegerSection<T extends object>(where: string, given: T | undefined, defaults: Required<T>): Required<T> {
  if (given === undefined) return { ...defaults };
  if (typeof given !== 'object' || given === null) throw new OptionError(`${where} must be an object`);
  assertKnownKeys(where, given, Object.keys(defaults));
  const merged = { ...defaults, ...given } as Required<T>;
  for (const [key, value] of Object.entries(merged)) assertNumber(`${where}.${key}`, value, 1);
  return merged;
}

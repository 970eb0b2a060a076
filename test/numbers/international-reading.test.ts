/**
 * The compiled reading of international digits answers what libphonenumber-js itself
 * answers (country, line type, possible, valid), number for number: over each country's
 * example mobile, each with its last digits changed, one digit more and one less, and over
 * random numbers of every calling code the metadata knows, geographic or not.
 */
import { describe, expect, it } from 'vitest';
import { getCountries, getCountryCallingCode, getExampleNumber, type CountryCode } from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/mobile/examples';
import { readInternationalByLibrary, readNumberUncached, type NumberReading } from '../../src/numbers/read-number.js';

const SEED_FORMAT = /^[1-9][0-9]{7,14}$/;
const NON_GEOGRAPHIC = ['800', '808', '870', '878', '881', '882', '883', '888', '979'];

/** A deterministic generator (a linear congruential one): the same numbers on every run. */
function randomDigits(seed: number): (bound: number) => number {
  let state = seed;
  return (bound) => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return Math.floor((state / 2_147_483_648) * bound);
  };
}

function exampleVariants(random: (bound: number) => number): string[] {
  const numbers: string[] = [];
  for (const country of getCountries()) {
    const digits = getExampleNumber(country as CountryCode, examples)?.number.slice(1);
    if (digits === undefined) continue;
    numbers.push(digits, `${digits}1`, digits.slice(0, -1));
    for (let k = 0; k < 40; k++) {
      const at = digits.length - 1 - random(Math.min(6, digits.length - 1));
      numbers.push(digits.slice(0, at) + String(random(10)) + digits.slice(at + 1));
    }
  }
  return numbers;
}

function randomNumbers(random: (bound: number) => number, count: number): string[] {
  const codes = [...new Set(getCountries().map((country) => getCountryCallingCode(country as CountryCode)))].concat(NON_GEOGRAPHIC);
  const numbers: string[] = [];
  for (let k = 0; k < count; k++) {
    const code = codes[random(codes.length)]!;
    let number = code;
    const length = 8 + random(8);
    while (number.length < length) number += String(random(10));
    numbers.push(number);
  }
  return numbers;
}

/** What libphonenumber-js says, as read-number.ts keeps it (a number it cannot read keeps its digits). */
function byLibrary(raw: string): NumberReading {
  return readInternationalByLibrary(raw) ?? { digits: raw, country: null, type: null, possible: false, valid: false, seedFormat: true };
}

describe('international digits, read with compiled patterns', () => {
  it("agree with libphonenumber-js on every country's mobiles and their near misses", () => {
    const numbers = exampleVariants(randomDigits(7)).filter((n) => SEED_FORMAT.test(n));
    expect(numbers.length).toBeGreaterThan(9_000);
    const differ = numbers.filter((n) => JSON.stringify(readNumberUncached(n, null)) !== JSON.stringify(byLibrary(n)));
    expect(differ.map((n) => ({ n, compiled: readNumberUncached(n, null), library: byLibrary(n) }))).toEqual([]);
  });

  it('agree with libphonenumber-js on random numbers of every calling code', () => {
    const numbers = randomNumbers(randomDigits(11), 40_000);
    const differ = numbers.filter((n) => JSON.stringify(readNumberUncached(n, null)) !== JSON.stringify(byLibrary(n)));
    expect(differ.map((n) => ({ n, compiled: readNumberUncached(n, null), library: byLibrary(n) }))).toEqual([]);
  });
});

/**
 * Recipients as a carrier takes them: real numbers of Kenya, Nigeria, India, the UK, the US
 * and Germany in each way a caller writes them, and the numbers each policy refuses.
 */
import { describe, expect, it } from 'vitest';
import { readNumber } from '../../src/numbers/read-number.js';
import { numberProblem, type NumberPolicy } from '../../src/numbers/policy.js';

/** The code a recipient gets under `policy` (`null`: accepted), read without a default country. */
function verdict(raw: string, policy: NumberPolicy = 'mobile', country: string | null = null): string | null {
  return numberProblem(readNumber(raw, country), policy)?.code ?? null;
}

describe('the default policy (mobile)', () => {
  it.each([
    ['254712345678', 'KE', 'mobile'],
    ['2348031234567', 'NG', 'mobile'],
    ['919876543210', 'IN', 'mobile'],
    ['447400123456', 'GB', 'mobile'],
    ['12025550123', 'US', 'fixed_line_or_mobile'],
    ['4915123456789', 'DE', 'mobile'],
  ])('accepts %s, a %s number of type %s', (raw, country, type) => {
    expect(verdict(raw)).toBeNull();
    expect(readNumber(raw, null)).toMatchObject({ digits: raw, country, type });
  });

  it.each([
    ['254000000000', 'an unassigned Kenyan range'],
    ['2547123456789', 'a Kenyan mobile one digit too long'],
    ['25471234567', 'a Kenyan mobile one digit too short'],
    ['2349031', 'too short for any country'],
    ['99912345678', 'a country code no country has'],
  ])('refuses %s (%s) as INVALID_RECIPIENT', (raw) => {
    expect(verdict(raw)).toBe('INVALID_RECIPIENT');
  });

  it.each([
    ['442073238299', 'a London landline'],
    ['49301234567', 'a Berlin landline'],
    ['912224567890', 'a Mumbai landline'],
  ])('refuses %s (%s) as NOT_MOBILE, naming its type and country', (raw) => {
    const problem = numberProblem(readNumber(raw, null), 'mobile');
    expect(problem?.code).toBe('NOT_MOBILE');
    expect(problem?.problem).toMatch(/^is a fixed line number for (GB|DE|IN), which cannot take SMS$/);
  });
});

describe('the relaxed policies', () => {
  it('valid takes a landline, still refuses an unassigned range', () => {
    expect(verdict('442073238299', 'valid')).toBeNull();
    expect(verdict('254000000000', 'valid')).toBe('INVALID_RECIPIENT');
  });

  it('possible takes any number of a length its country uses', () => {
    expect(verdict('254000000000', 'possible')).toBeNull();
    // Kenyan numbers have 8 to 10 national digits: 11 is no length it uses.
    expect(verdict('25471234567890', 'possible')).toBe('INVALID_RECIPIENT');
  });

  it('digits takes 8 to 15 digits, as the seed did', () => {
    expect(verdict('2547123456789', 'digits')).toBeNull();
    expect(verdict('99912345678', 'digits')).toBeNull();
  });
});

describe('normalisation with a default country', () => {
  it.each([
    ['KE', ['0712345678', '+254 712 345 678', '254712345678', '+254712345678', '0712-345-678', '712345678'], '254712345678'],
    ['NG', ['08031234567', '+234 803 123 4567', '2348031234567'], '2348031234567'],
    ['IN', ['09876543210', '+91 98765 43210', '919876543210', '9876543210'], '919876543210'],
    ['GB', ['07400 123456', '+44 7400 123456', '447400123456'], '447400123456'],
    ['US', ['(202) 555-0123', '202-555-0123', '+1 202 555 0123', '12025550123'], '12025550123'],
    ['DE', ['015123456789', '+49 151 23456789', '4915123456789'], '4915123456789'],
  ])('in %s every writing is stored as the same digits', (country, writings, digits) => {
    for (const raw of writings) {
      const read = readNumber(raw, country);
      expect(read.digits, raw).toBe(digits);
      expect(numberProblem(read, 'mobile'), raw).toBeNull();
    }
  });

  it('round-trips: the stored digits read back as themselves', () => {
    for (const digits of ['254712345678', '2348031234567', '919876543210', '447400123456', '12025550123', '4915123456789']) {
      expect(readNumber(digits, 'KE').digits).toBe(digits);
      expect(readNumber(`+${digits}`, 'KE').digits).toBe(digits);
    }
  });

  it('reads a national number of another country as that country only with its +', () => {
    expect(readNumber('+44 7400 123456', 'KE').country).toBe('GB');
    expect(verdict('07400 123456', 'mobile', 'KE')).toBe('INVALID_RECIPIENT');
  });
});

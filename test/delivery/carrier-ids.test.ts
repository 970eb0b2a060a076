import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { carrierIdSpellings, normalizeCarrierId } from '../../src/delivery/carrier-ids.js';

describe('normalizeCarrierId', () => {
  it('trims, lower-cases and strips leading zeros', () => {
    expect(normalizeCarrierId('  00ABC123\n')).toBe('abc123');
    expect(normalizeCarrierId('0000001234567890123')).toBe('1234567890123');
    expect(normalizeCarrierId('11F71FB04CB')).toBe('11f71fb04cb');
  });

  it('keeps a single zero for an id of only zeros', () => {
    expect(normalizeCarrierId('0')).toBe('0');
    expect(normalizeCarrierId('0000')).toBe('0');
  });

  it('leaves an empty id empty', () => {
    expect(normalizeCarrierId('   ')).toBe('');
  });
});

describe('carrierIdSpellings', () => {
  // 1234567890123 = 0x11F71FB04CB: the same id as a carrier writes it in the ack and the receipt.
  const decimal = '1234567890123';
  const hex = '11F71FB04CB';

  it('matches a decimal receipt id to the hex id the ack gave', () => {
    const stored = normalizeCarrierId(hex);
    const spellings = carrierIdSpellings(decimal);
    expect(spellings[0]).toBe(decimal);
    expect(spellings).toContain(stored);
    expect(spellings).toEqual([decimal, '11f71fb04cb', BigInt(`0x${decimal}`).toString(10)]);
  });

  it('matches a hex receipt id (any case, padded) to the decimal id the ack gave', () => {
    const stored = normalizeCarrierId(decimal);
    expect(carrierIdSpellings('00' + hex)).toEqual(['11f71fb04cb', decimal]);
    expect(carrierIdSpellings(hex.toLowerCase())).toContain(stored);
  });

  it('tries the id as written first, so a carrier that is consistent matches exactly', () => {
    expect(carrierIdSpellings('  0042 ')[0]).toBe('42');
    expect(carrierIdSpellings('0042')).toEqual(['42', '2a', '66']);
  });

  it('converts ids wider than 64 bits exactly', () => {
    const big = '123456789012345678901234567890';
    const bigHex = BigInt(big).toString(16);
    expect(carrierIdSpellings(big)).toContain(bigHex);
    expect(carrierIdSpellings(bigHex.toUpperCase())).toContain(big);
    expect(carrierIdSpellings('ffffffffffffffff')).toEqual(['ffffffffffffffff', '18446744073709551615']);
  });

  it('gives a non-numeric id (UUID-like) only itself', () => {
    const uuid = '3F2504E0-4F89-11D3-9A0C-0305E82C3301';
    expect(carrierIdSpellings(uuid)).toEqual(['3f2504e0-4f89-11d3-9a0c-0305e82c3301']);
    expect(carrierIdSpellings('msg-17')).toEqual(['msg-17']);
  });

  it('de-duplicates spellings that coincide', () => {
    expect(carrierIdSpellings('0')).toEqual(['0']);
    expect(carrierIdSpellings('7')).toEqual(['7']);
    expect(carrierIdSpellings('10')).toEqual(['10', 'a', '16']);
  });

  it('gives an empty id only itself', () => {
    expect(carrierIdSpellings('')).toEqual(['']);
  });

  it('always finds the stored id, for any number written in either base', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 96n) - 1n }), fc.nat(3), fc.boolean(), (value, zeros, upper) => {
        const ackHex = value.toString(16);
        const receiptDecimal = '0'.repeat(zeros) + value.toString(10);
        const stored = normalizeCarrierId(upper ? ackHex.toUpperCase() : ackHex);
        expect(carrierIdSpellings(receiptDecimal)).toContain(stored);
        const storedDecimal = normalizeCarrierId(value.toString(10));
        expect(carrierIdSpellings('0'.repeat(zeros) + (upper ? ackHex.toUpperCase() : ackHex))).toContain(storedDecimal);
      }),
    );
  });
});

describe('route-qualified carrier ids', () => {
  it('spell the id after the route as any other id, and keep the route on every spelling', () => {
    expect(normalizeCarrierId('  Safaricom:00A0000000 ')).toBe('safaricom:a0000000');
    expect(carrierIdSpellings('safaricom:2684354560')).toContain(normalizeCarrierId('safaricom:A0000000'));
    expect(carrierIdSpellings('b:0042')).toEqual(['b:42', 'b:2a', 'b:66']);
  });

  it('never match the same id of another route', () => {
    expect(carrierIdSpellings('a:2684354560')).not.toContain(normalizeCarrierId('b:A0000000'));
    expect(carrierIdSpellings('a:2684354560').every((spelling) => spelling.startsWith('a:'))).toBe(true);
  });
});

import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { countSms, splitSms } from '../../src/sms/segments.js';
import { encodeGsm7, GSM_BASIC_CHARS, GSM_EXTENSION_CHARS } from '../../src/sms/gsm-tables.js';

const EURO = '\u20AC';
const ZHE = '\u0436'; // Cyrillic small zhe: not GSM, one UTF-16 unit
const EMOJI = '\uD83D\uDE00'; // grinning face: a surrogate pair

/** Septets of a GSM-7 part, counted independently of the code under test. */
function septetsOf(part: string): number {
  let septets = 0;
  for (const ch of part) septets += GSM_EXTENSION_CHARS.includes(ch) ? 2 : 1;
  return septets;
}

/** Checks every property a caller relies on for one text. */
function expectConsistentSplit(text: string): void {
  const count = countSms(text);
  const parts = splitSms(text);
  expect(parts).toHaveLength(count.smsCount);
  expect(parts.join('')).toBe(text);
  if (parts.length === 1) return;
  for (let p = 0; p < parts.length; p++) {
    const part = parts[p]!;
    expect(part.length).toBeGreaterThan(0);
    if (count.encoding === 'GSM-7') expect(septetsOf(part)).toBeLessThanOrEqual(153);
    else expect(part.length).toBeLessThanOrEqual(67);
    const next = parts[p + 1];
    if (next !== undefined) {
      const last = part.charCodeAt(part.length - 1);
      const first = next.charCodeAt(0);
      const splitsPair = last >= 0xd800 && last <= 0xdbff && first >= 0xdc00 && first <= 0xdfff;
      expect(splitsPair).toBe(false);
    }
  }
}

/** The rule written the obvious way, to check the fast code against. */
function referenceCount(text: string): { smsCount: number; encoding: string; units: number } {
  const gsm = [...text].every((ch) => GSM_BASIC_CHARS.includes(ch) || GSM_EXTENSION_CHARS.includes(ch));
  const single = gsm ? 160 : 70;
  const perPart = gsm ? 153 : 67;
  // Code points: a surrogate pair is one item (2 units), a lone surrogate one item (1 unit).
  const costs = [...text].map((ch) => (gsm ? septetsOf(ch) : ch.length));
  const units = costs.reduce((a, b) => a + b, 0);
  if (units <= single) return { smsCount: 1, encoding: gsm ? 'GSM-7' : 'UCS-2', units };
  let parts = 1;
  let used = 0;
  for (const cost of costs) {
    if (used + cost > perPart) {
      parts++;
      used = 0;
    }
    used += cost;
  }
  return { smsCount: parts, encoding: gsm ? 'GSM-7' : 'UCS-2', units };
}

describe('countSms: GSM-7', () => {
  it.each([
    [160, 1],
    [161, 2],
    [306, 2],
    [307, 3],
    [459, 3],
    [460, 4],
  ])('%i basic characters are %i SMS', (length, smsCount) => {
    const text = 'a'.repeat(length);
    expect(countSms(text)).toEqual({ smsCount, encoding: 'GSM-7', units: length });
    expectConsistentSplit(text);
  });

  it('counts the euro sign and the other extension characters as two septets', () => {
    expect(countSms(EURO)).toEqual({ smsCount: 1, encoding: 'GSM-7', units: 2 });
    for (const ch of GSM_EXTENSION_CHARS) expect(countSms(ch)).toEqual({ smsCount: 1, encoding: 'GSM-7', units: 2 });
  });

  it('counts every basic-table character as one septet', () => {
    for (const ch of GSM_BASIC_CHARS) expect(countSms(ch)).toEqual({ smsCount: 1, encoding: 'GSM-7', units: 1 });
    expect(countSms(GSM_BASIC_CHARS)).toEqual({ smsCount: 1, encoding: 'GSM-7', units: 127 });
  });

  it('fits 80 extension characters (160 septets) in one SMS, 81 in two', () => {
    expect(countSms('{'.repeat(80))).toEqual({ smsCount: 1, encoding: 'GSM-7', units: 160 });
    expect(countSms('{'.repeat(81))).toEqual({ smsCount: 2, encoding: 'GSM-7', units: 162 });
    expect(splitSms('{'.repeat(81)).map((p) => p.length)).toEqual([76, 5]);
  });

  it('moves an extension character that would straddle septet 153 into the next part', () => {
    // Septets 153 and 154 would hold the escape and the euro: it goes to part 2, which then
    // overflows into a third part although 306 septets divide into two.
    const text = 'a'.repeat(152) + EURO + 'a'.repeat(152);
    expect(countSms(text)).toEqual({ smsCount: 3, encoding: 'GSM-7', units: 306 });
    const parts = splitSms(text);
    expect(parts.map((p) => p.length)).toEqual([152, 152, 1]);
    expect(parts[1]!.startsWith(EURO)).toBe(true);
    expectConsistentSplit(text);
  });

  it('keeps an extension character that ends exactly on septet 153 in the first part', () => {
    const text = 'a'.repeat(151) + EURO + 'a'.repeat(153);
    expect(countSms(text)).toEqual({ smsCount: 2, encoding: 'GSM-7', units: 306 });
    expect(splitSms(text).map((p) => p.length)).toEqual([152, 153]);
  });

  it('packs 153 extension characters (306 septets) into three parts, not two', () => {
    const text = '['.repeat(153);
    expect(countSms(text)).toEqual({ smsCount: 3, encoding: 'GSM-7', units: 306 });
    expect(splitSms(text).map((p) => p.length)).toEqual([76, 76, 1]);
  });

  it('keeps capital C-cedilla GSM-7 but turns the text UCS-2 for a small c-cedilla', () => {
    expect(countSms('Gar\u00C7on')).toEqual({ smsCount: 1, encoding: 'GSM-7', units: 6 });
    expect(countSms('gar\u00E7on')).toEqual({ smsCount: 1, encoding: 'UCS-2', units: 6 });
  });

  it('turns a whole long text UCS-2 for one non-GSM character at its end', () => {
    const text = 'a'.repeat(159) + '\u00E7';
    expect(countSms(text)).toEqual({ smsCount: 3, encoding: 'UCS-2', units: 160 });
    expectConsistentSplit(text);
  });

  it('treats ASCII outside the GSM alphabet (backtick, tab) as UCS-2', () => {
    expect(countSms('a`b').encoding).toBe('UCS-2');
    expect(countSms('a\tb').encoding).toBe('UCS-2');
    expect(countSms('line\r\nbreak').encoding).toBe('GSM-7');
  });

  it('counts the empty text as one SMS without throwing', () => {
    expect(countSms('')).toEqual({ smsCount: 1, encoding: 'GSM-7', units: 0 });
    expect(splitSms('')).toEqual(['']);
  });
});

describe('countSms: UCS-2', () => {
  it.each([
    [70, 1],
    [71, 2],
    [134, 2],
    [135, 3],
  ])('%i UCS-2 units are %i SMS', (length, smsCount) => {
    const text = ZHE.repeat(length);
    expect(countSms(text)).toEqual({ smsCount, encoding: 'UCS-2', units: length });
    expectConsistentSplit(text);
  });

  it('never splits an emoji that falls on units 66-67 of a part', () => {
    // Units 66 and 67 (0-based) straddle the 67-unit boundary: the emoji opens part 2.
    const text = ZHE.repeat(66) + EMOJI + ZHE.repeat(66);
    expect(countSms(text)).toEqual({ smsCount: 3, encoding: 'UCS-2', units: 134 });
    const parts = splitSms(text);
    expect(parts.map((p) => p.length)).toEqual([66, 67, 1]);
    expect(parts[1]!.startsWith(EMOJI)).toBe(true);
    expectConsistentSplit(text);
  });

  it('keeps an emoji that ends exactly on unit 67 in the first part', () => {
    const text = ZHE.repeat(65) + EMOJI + ZHE.repeat(67);
    expect(countSms(text)).toEqual({ smsCount: 2, encoding: 'UCS-2', units: 134 });
    expect(splitSms(text).map((p) => p.length)).toEqual([67, 67]);
  });

  it('applies the same rule at the boundary of a later part', () => {
    const text = ZHE.repeat(67 + 66) + EMOJI + ZHE.repeat(10);
    expect(splitSms(text).map((p) => p.length)).toEqual([67, 66, 12]);
    expectConsistentSplit(text);
  });

  it('counts 35 emoji (70 units) as one SMS and 36 as two', () => {
    expect(countSms(EMOJI.repeat(35))).toEqual({ smsCount: 1, encoding: 'UCS-2', units: 70 });
    expect(countSms(EMOJI.repeat(36))).toEqual({ smsCount: 2, encoding: 'UCS-2', units: 72 });
  });

  it('counts lone surrogates as single UCS-2 units without throwing', () => {
    expect(countSms('a\uD800b')).toEqual({ smsCount: 1, encoding: 'UCS-2', units: 3 });
    expect(countSms('\uDC00')).toEqual({ smsCount: 1, encoding: 'UCS-2', units: 1 });
    // A lone high surrogate on unit 67 has no partner to keep it company: it stays.
    const text = 'a'.repeat(66) + '\uD83D' + 'b'.repeat(10);
    expect(splitSms(text).map((p) => p.length)).toEqual([67, 10]);
  });
});

describe('countSms against the obvious rule', () => {
  const textOf = (alphabet: string[], maxLength: number) =>
    fc.array(fc.constantFrom(...alphabet), { maxLength }).map((chars) => chars.join(''));
  const printableAscii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(0x20 + i));
  const basicAscii = printableAscii.filter((ch) => GSM_BASIC_CHARS.includes(ch));
  const agrees = (texts: fc.Arbitrary<string>) =>
    fc.assert(
      fc.property(texts, (t) => {
        expect(countSms(t)).toEqual(referenceCount(t));
      }),
      { numRuns: 1000 },
    );

  it('agrees on ASCII texts, extension and non-GSM characters at every alignment', () => {
    const mostlyBasic = [...basicAscii, ...basicAscii, ...basicAscii, '{', '~', '\\', '|', '\n', '\r'];
    agrees(textOf(mostlyBasic, 700));
    const anyAscii = [...printableAscii, '\n', '\r', '\t', '\f', '\u007F', '\u0000', '\u001B'];
    agrees(textOf(anyAscii, 300));
  });

  it('agrees on mixed texts of every kind', () => {
    const mixed = ['a', 'b', ' ', '.', EURO, '{', ']', '\u00E9', '\u0394', '\u00E7', ZHE, EMOJI, '\uD800', '\uDC00'];
    agrees(textOf(mixed, 700));
  });

  it('finds a single non-GSM ASCII character anywhere in a long ASCII text', () => {
    for (const odd of ['`', '\t', '\u007F', '\u0000', '\u001B']) {
      for (let at = 0; at < 200; at++) {
        const text = 'a'.repeat(at) + odd + 'b'.repeat(199 - at);
        expect(countSms(text)).toEqual({ smsCount: 3, encoding: 'UCS-2', units: 200 });
      }
    }
  });

  it('counts a single extension character anywhere in a long ASCII text', () => {
    for (const ext of ['[', '\\', ']', '^', '{', '|', '}', '~', '\f']) {
      for (let at = 0; at < 306; at++) {
        const text = 'a'.repeat(at) + ext + 'b'.repeat(305 - at);
        expect(countSms(text)).toEqual(referenceCount(text));
      }
    }
  });

  it('does not confuse the ASCII neighbours of the extension characters', () => {
    // Z, _ , a, z sit right beside the ranges the scan stops at ([ \\ ] ^ and ` { | } ~); none of them costs extra.
    const text = 'Z_az@$'.repeat(40);
    expect(countSms(text)).toEqual({ smsCount: 2, encoding: 'GSM-7', units: 240 });
  });

  it('counts very long texts, and shorter ones after them, by the same rule', () => {
    expect(countSms('a'.repeat(20000)).smsCount).toBe(Math.ceil(20000 / 153));
    expect(countSms('a'.repeat(100000) + '{')).toEqual({ smsCount: Math.ceil(100002 / 153), encoding: 'GSM-7', units: 100002 });
    expect(countSms('x'.repeat(200))).toEqual({ smsCount: 2, encoding: 'GSM-7', units: 200 });
  });
});

describe('splitSms', () => {
  it('returns a text that fits one SMS as a single part', () => {
    expect(splitSms('Hello')).toEqual(['Hello']);
    expect(splitSms('a'.repeat(160))).toEqual(['a'.repeat(160)]);
    expect(splitSms(ZHE.repeat(70))).toEqual([ZHE.repeat(70)]);
  });

  it('cuts a long GSM-7 text into parts of 153 septets', () => {
    expect(splitSms('a'.repeat(307)).map((p) => p.length)).toEqual([153, 153, 1]);
  });

  it('joins back to the input, with every part within its limit, for any text', () => {
    const alphabet = ['a', ' ', EURO, '{', '\u00C7', '\u00E7', ZHE, EMOJI, '\uD800', '\uDC00', '\u0394'];
    const char = fc.constantFrom(...alphabet);
    const text = fc.array(char, { maxLength: 500 }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(text, (t) => {
        expectConsistentSplit(t);
        // Greedy packing: no part but the last could have taken the next part's first unit.
        const { encoding } = countSms(t);
        const parts = splitSms(t);
        for (let p = 0; p + 1 < parts.length; p++) {
          const part = parts[p]!;
          const next = parts[p + 1]!;
          const firstChar = String.fromCodePoint(next.codePointAt(0)!);
          const head = firstChar.length === 2 && next.length >= 2 ? firstChar : next[0]!;
          if (encoding === 'GSM-7') expect(septetsOf(part) + septetsOf(head)).toBeGreaterThan(153);
          else expect(part.length + head.length).toBeGreaterThan(67);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('encodeGsm7', () => {
  it('gives the same octets as the smpp library encoder for every character of the alphabet', async () => {
    const smpp = (await import('smpp')).default as unknown as { encodings: { ASCII: { encode(text: string): Buffer } } };
    const alphabet = GSM_BASIC_CHARS + GSM_EXTENSION_CHARS;
    expect(encodeGsm7(alphabet).equals(smpp.encodings.ASCII.encode(alphabet))).toBe(true);
    // Extension characters take an escape and their code; the rest one octet each.
    expect([...encodeGsm7('a{€')]).toEqual([0x61, 0x1b, 0x28, 0x1b, 0x65]);
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...alphabet), { maxLength: 200 }), (chars) => {
        const text = chars.join('');
        expect(encodeGsm7(text).equals(smpp.encodings.ASCII.encode(text))).toBe(true);
      }),
    );
  });
});

import { describe, expect, it } from 'vitest';
import { countSms, smartEncode } from '../../src/index.js';
import { GSM_COST } from '../../src/sms/gsm-tables.js';
import { SMART_REPLACEMENTS } from '../../src/sms/smart-encoding.js';

const hex = (code: number): string => `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;

describe('smart encoding', () => {
  it('replaces every character of the table by its GSM-7 look-alike', () => {
    expect(SMART_REPLACEMENTS.size).toBeGreaterThan(100);
    for (const [code, replacement] of SMART_REPLACEMENTS) {
      const char = String.fromCharCode(code);
      expect(GSM_COST[code], `${hex(code)} is outside the GSM alphabet`).toBe(0);
      for (let i = 0; i < replacement.length; i++) expect(GSM_COST[replacement.charCodeAt(i)], `${hex(code)} -> ${replacement}`).toBeGreaterThan(0);
      expect(smartEncode(`a${char}b`), hex(code)).toBe(`a${replacement}b`);
      expect(countSms(`a${char}b`, { smartEncoding: true }), hex(code)).toEqual(countSms(`a${replacement}b`));
    }
  });

  it('replaces the characters of everyday texts: quotes, dashes, ellipsis, spaces', () => {
    const vectors: [string, string][] = [
      ['It\u2019s \u201Cdone\u201D \u2014 see you\u2026', 'It\'s "done" - see you...'],
      ['\u00ABBonjour\u00BB', '"Bonjour"'],
      ['10\u00A0000 KES \u2013 paid', '10 000 KES - paid'],
      ['Price:\u2009KES\u202F500', 'Price: KES 500'],
      ['zero\u200Bwidth\uFEFF', 'zerowidth'],
      ['\u2018single\u2019 \u201Adouble-low\u201E', "'single' 'double-low\""],
      ['\uFF08full\uFF09 width\uFF01', '(full) width!'],
      ['tilde \u02DC and caret \u02C6', 'tilde ~ and caret ^'],
    ];
    for (const [text, sent] of vectors) expect(smartEncode(text), JSON.stringify(text)).toBe(sent);
  });

  it('saves the units of a long text with one curly apostrophe', () => {
    const text = `It\u2019s ${'z'.repeat(155)}`;
    expect(countSms(text)).toEqual({ smsCount: 3, encoding: 'UCS-2', units: 160 });
    expect(countSms(text, { smartEncoding: true })).toEqual({ smsCount: 1, encoding: 'GSM-7', units: 160 });
  });

  it('leaves unchanged the texts it cannot make cheaper', () => {
    const unchanged = [
      '',
      'Hello, your code is 4821',
      'Price \u20AC10 {promo} [now] ~ \\ | ^',
      '\u00E9\u00E8 \u00C7a va? \u00A3 \u00A5 \u0394',
      'Smile \uD83D\uDE00 \u2019cause',
      '\u041F\u0440\u0438\u0432\u0435\u0442 \u2014 \u043C\u0438\u0440',
      '\u4F60\u597D\u2026',
      // 70 ellipses are one UCS-2 SMS; as dots they would be 210 septets, two SMS.
      '\u2026'.repeat(70),
      'lone \uD800 surrogate \u2019',
    ];
    for (const text of unchanged) {
      expect(smartEncode(text), JSON.stringify(text)).toBe(text);
      expect(countSms(text, { smartEncoding: true }), JSON.stringify(text)).toEqual(countSms(text));
    }
  });

  it('replaces when the result costs the same, as GSM-7 rather than UCS-2', () => {
    expect(smartEncode('\u2026'.repeat(20))).toBe('...'.repeat(20));
    expect(countSms('\u2026'.repeat(20), { smartEncoding: true })).toEqual({ smsCount: 1, encoding: 'GSM-7', units: 60 });
  });

  it('counts with smart encoding exactly what it sends, on a mixed corpus', () => {
    const pieces = ['plain ', '\u2019', '\u2014', '\u2026', '\u00A0', '\u20AC', '{', '\u00E9', '\uD83D\uDE00', '\u0436', 'x'.repeat(50)];
    let seed = 7;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let n = 0; n < 2000; n++) {
      let text = '';
      const length = 1 + Math.floor(random() * 12);
      for (let i = 0; i < length; i++) text += pieces[Math.floor(random() * pieces.length)];
      expect(countSms(text, { smartEncoding: true }), JSON.stringify(text)).toEqual(countSms(smartEncode(text)));
      expect(countSms(smartEncode(text)).smsCount).toBeLessThanOrEqual(countSms(text).smsCount);
    }
  });
});

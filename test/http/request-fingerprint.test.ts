import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalJson, requestFingerprint } from '../../src/http/request-fingerprint.js';

/** The body as JSON with sorted keys: what the fingerprint must tell apart, and no more. */
function sortedJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  const object = value as Record<string, unknown>;
  return `{${Object.keys(object).sort().map((key) => `${JSON.stringify(key)}:${sortedJson(object[key])}`).join(',')}}`;
}

/** `value` with every object's keys in reverse order (as a client might write them). */
function reversedKeys(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(reversedKeys);
  return Object.fromEntries(Object.entries(value).reverse().map(([key, inner]) => [key, reversedKeys(inner)]));
}

describe('requestFingerprint', () => {
  const body = { profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Hi', external_id: 'a-1' }] };

  it('is one fingerprint for bodies that differ only in key order, spacing or number spelling', () => {
    const spaced = JSON.parse(' {\n "messages" : [ { "external_id":"a-1", "message":"Hi", "recipient":"254712345678" } ], "profile_code": "12345" } ');
    expect(requestFingerprint('quick', spaced)).toBe(requestFingerprint('quick', body));
    expect(requestFingerprint('quick', JSON.parse('{"n": 1.0}'))).toBe(requestFingerprint('quick', JSON.parse('{"n": 1}')));
    expect(requestFingerprint('quick', body)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('tells apart requests that ask for different things', () => {
    const pairs: [unknown, unknown][] = [
      [body, { ...body, profile_code: '12346' }],
      [['a', 'b'], ['ab']],
      [{ a: 'b' }, { ab: '' }],
      [{ a: ['b'] }, { a: 'b' }],
      [1, '1'],
      [[], {}],
      [null, 'null'],
      [true, 'true'],
      [[[]], [[], []]],
      [{ a: {} }, { a: [] }],
    ];
    for (const [a, b] of pairs) expect(requestFingerprint('quick', a), JSON.stringify([a, b])).not.toBe(requestFingerprint('quick', b));
    expect(requestFingerprint('quick', body)).not.toBe(requestFingerprint('premium', body));
  });

  it('matches exactly when the bodies are one JSON value, keys in any order', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(requestFingerprint('quick', reversedKeys(a))).toBe(requestFingerprint('quick', a));
        expect(requestFingerprint('quick', a) === requestFingerprint('quick', b)).toBe(sortedJson(a) === sortedJson(b));
      }),
      { numRuns: 500 },
    );
  });
});

describe('canonicalJson', () => {
  it('writes sorted keys without whitespace', () => {
    const a = JSON.parse('{"b": [1, {"y": 2, "x": 1.0}], "a": "\\u00e9"}');
    expect(canonicalJson(a)).toBe('{"a":"\u00e9","b":[1,{"x":1,"y":2}]}');
    expect(canonicalJson([null, true, 'x'])).toBe('[null,true,"x"]');
  });

  it('writes every string as JSON.stringify does, escapes included', () => {
    const texts = ['plain', 'a "quote"', 'back\\slash', 'tab\there', '\u0000\u001f', 'lone \ud800 high', 'pair \ud83d\ude00 ok', 'é ü €'];
    for (const text of texts) {
      expect(canonicalJson(text)).toBe(JSON.stringify(text));
      expect(canonicalJson({ [text]: text })).toBe(JSON.stringify({ [text]: text }));
    }
  });

  it('is JSON.parse-able back to the same value, keys sorted', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(sortedJson(value));
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 300 },
    );
  });
});

describe('canonicalJson key order', () => {
  it('orders keys as Array.prototype.sort does, for small and large objects', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.oneof(fc.string({ unit: 'binary', maxLength: 4 }), fc.nat(20).map(String)), { maxLength: 12 }), (keys) => {
        const object = Object.fromEntries(keys.map((key, i) => [key, i]));
        const expected = `{${Object.keys(object).sort().map((key) => `${JSON.stringify(key)}:${object[key]}`).join(',')}}`;
        expect(canonicalJson(object)).toBe(expected);
      }),
    );
  });
});

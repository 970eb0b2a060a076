/**
 * The fingerprint an `Idempotency-Key` keeps of its first request, so that a retry can be
 * told from another request under the same key: SHA-256 of the endpoint and the parsed body
 * written as canonical JSON (every object's keys sorted, no whitespace). Two bodies that
 * differ only in key order or spacing have one fingerprint; `1.0` and `1` are one number,
 * as they are once parsed.
 *
 * Fingerprints are stored with their records: changing what is hashed or how makes a retry
 * that crosses the upgrade a 422, so do it only with a new record format.
 *
 * @module
 */
import { hash } from 'node:crypto';
import type { Endpoint } from '../storage/contract.js';

/**
 * `text` as a JSON string: quoted as it is when nothing in it needs an escape (a body's usual
 * text), which is neither a quote, a backslash, a control character nor a UTF-16 surrogate
 * (`JSON.stringify` escapes a lone one). A loop over the characters, not a regular
 * expression: for the short strings of a body the call into the regex engine costs more.
 */
function jsonString(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(text);
  }
  return `"${text}"`;
}

/**
 * Puts `keys` in code-unit order (as `Array.prototype.sort` orders strings) and `values` in
 * the same order. A body's objects have a handful of keys, which an insertion sort puts in
 * order for less than a call to the built-in sort costs; a larger object gets the built-in
 * sort (an insertion sort of thousands of keys would be quadratic).
 */
function sortEntries(keys: string[], values: unknown[]): void {
  if (keys.length > 8) {
    const order = keys.map((_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : 1));
    const [k, v] = [[...keys], [...values]];
    order.forEach((from, to) => {
      keys[to] = k[from]!;
      values[to] = v[from];
    });
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    const value = values[i];
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) {
      keys[j + 1] = keys[j]!;
      values[j + 1] = values[j];
    }
    keys[j + 1] = key;
    values[j + 1] = value;
  }
}

/**
 * `value` as JSON with every object's keys sorted and no whitespace: the same text for two
 * bodies that differ only in key order or spacing. Numbers are written as `JSON.stringify`
 * writes the parsed value. An object's values are read with `Object.values` rather than by
 * key: a lookup by a computed key goes through V8's shared inline-cache table, which a busy
 * Express server keeps full, and then costs a slow lookup per key.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'string') return jsonString(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += (i > 0 ? ',' : '') + canonicalJson(value[i]);
    return `${text}]`;
  }
  const keys = Object.keys(value);
  const values = Object.values(value);
  sortEntries(keys, values);
  let text = '{';
  for (let i = 0; i < keys.length; i++) text += `${i > 0 ? ',' : ''}${jsonString(keys[i]!)}:${canonicalJson(values[i])}`;
  return `${text}}`;
}

/**
 * The fingerprint of what a request asks for: SHA-256 (hex) of its endpoint and canonical
 * body. The one-shot `crypto.hash`: no Hash object per request.
 */
export function requestFingerprint(endpoint: Endpoint, body: unknown): string {
  return hash('sha256', `${endpoint}\n${canonicalJson(body)}`, 'hex');
}

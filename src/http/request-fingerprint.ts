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
 * A string JSON writes without escapes needs none of these: a quote, a backslash, a control
 * character or a UTF-16 surrogate (`JSON.stringify` escapes a lone one).
 */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `text` as a JSON string: quoted as it is when nothing in it needs an escape (a body's usual text). */
function jsonString(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/**
 * The object's own keys in code-unit order, as `Array.prototype.sort` orders strings. A body's
 * objects have a handful of keys, which an insertion sort puts in order for less than the
 * call to the built-in sort costs.
 */
function sortedKeys(object: object): string[] {
  const keys = Object.keys(object);
  if (keys.length > 8) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
  return keys;
}

/**
 * `value` as JSON with every object's keys sorted and no whitespace: the same text for two
 * bodies that differ only in key order or spacing. Numbers are written as `JSON.stringify`
 * writes the parsed value.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'string') return jsonString(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += (i > 0 ? ',' : '') + canonicalJson(value[i]);
    return `${text}]`;
  }
  const object = value as Record<string, unknown>;
  const keys = sortedKeys(object);
  let text = '{';
  for (let i = 0; i < keys.length; i++) text += `${i > 0 ? ',' : ''}${jsonString(keys[i]!)}:${canonicalJson(object[keys[i]!])}`;
  return `${text}}`;
}

/**
 * The fingerprint of what a request asks for: SHA-256 (hex) of its endpoint and canonical
 * body. The one-shot `crypto.hash`: no Hash object per request.
 */
export function requestFingerprint(endpoint: Endpoint, body: unknown): string {
  return hash('sha256', `${endpoint}\n${canonicalJson(body)}`, 'hex');
}

/**
 * `staticKeys`: a key verifier over a fixed list of keys, given in plain text or as
 * SHA-256 digests so the host need not keep the keys themselves in its configuration.
 */
import * as crypto from 'node:crypto';
import type { KeyVerifier, Principal } from './principal.js';

/** One key of {@link staticKeys}: exactly one of `key` or `sha256`, and its principal. */
export type StaticKey = Principal &
  ({ key: string; sha256?: undefined } | { sha256: string; key?: undefined });

/**
 * The SHA-256 of `text` in hex. Node's one-shot `crypto.hash` (20.12 and later) skips the
 * Hash object `createHash` makes, measurable when it runs on every request.
 */
const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'hex')
    : (text) => crypto.createHash('sha256').update(text).digest('hex');

/**
 * A {@link KeyVerifier} over a fixed list of keys.
 *
 * Keys are looked up by their SHA-256 digest, never compared themselves: a lookup's timing
 * can reveal at most something about a digest, which tells an attacker nothing about a key
 * (finding a key for a digest is a preimage attack). So no constant-time comparison is
 * needed on top.
 *
 * @example staticKeys([{ key: process.env.SMS_API_KEY!, id: 'acme', profiles: ['12345'] }])
 * @throws TypeError at construction for an entry without a key, a malformed digest, or a
 *   key listed twice.
 */
export function staticKeys(keys: readonly StaticKey[]): KeyVerifier {
  const byDigest = new Map<string, Principal>();
  for (const entry of keys) {
    const { key, sha256: hex, ...principal } = entry;
    let digest: string;
    if (typeof key === 'string' && key.length > 0) digest = sha256Hex(key);
    else if (typeof hex === 'string' && /^[0-9a-f]{64}$/i.test(hex)) digest = hex.toLowerCase();
    else throw new TypeError(`staticKeys: entry "${entry.id}" needs a non-empty \`key\` or a 64-hex-digit \`sha256\``);
    if (byDigest.has(digest)) throw new TypeError(`staticKeys: the key of "${entry.id}" is listed twice`);
    byDigest.set(digest, Object.freeze({ ...principal }));
  }
  return (apiKey) => byDigest.get(sha256Hex(apiKey)) ?? null;
}

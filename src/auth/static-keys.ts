/**
 * `staticKeys`: a key verifier over a fixed list of keys, given in plain text or as
 * SHA-256 digests so the host need not keep the keys themselves in its configuration.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { KeyVerifier, Principal } from './principal.js';

/** One key of {@link staticKeys}: exactly one of `key` or `sha256`, and its principal. */
export type StaticKey = Principal &
  ({ key: string; sha256?: undefined } | { sha256: string; key?: undefined });

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * A {@link KeyVerifier} over a fixed list of keys.
 *
 * Keys are looked up by their SHA-256 digest, and the digest found is compared again in
 * constant time. A lookup's timing can reveal at most something about a digest, which
 * tells an attacker nothing about a key.
 *
 * @example staticKeys([{ key: process.env.SMS_API_KEY!, id: 'acme', profiles: ['12345'] }])
 * @throws TypeError at construction for an entry without a key, a malformed digest, or a
 *   key listed twice.
 */
export function staticKeys(keys: readonly StaticKey[]): KeyVerifier {
  const byDigest = new Map<string, { digest: Buffer; principal: Principal }>();
  for (const entry of keys) {
    const { key, sha256: hex, ...principal } = entry;
    let digest: Buffer;
    if (typeof key === 'string' && key.length > 0) digest = sha256(key);
    else if (typeof hex === 'string' && /^[0-9a-f]{64}$/i.test(hex)) digest = Buffer.from(hex, 'hex');
    else throw new TypeError(`staticKeys: entry "${entry.id}" needs a non-empty \`key\` or a 64-hex-digit \`sha256\``);
    const id = digest.toString('hex');
    if (byDigest.has(id)) throw new TypeError(`staticKeys: the key of "${entry.id}" is listed twice`);
    byDigest.set(id, { digest, principal: Object.freeze({ ...principal }) });
  }
  return (apiKey) => {
    const digest = sha256(apiKey);
    const found = byDigest.get(digest.toString('hex'));
    return found && timingSafeEqual(found.digest, digest) ? found.principal : null;
  };
}

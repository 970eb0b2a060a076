/**
 * Standard Webhooks signing (HMAC-SHA256, signature version `v1`) of delivery reports.
 *
 * Secrets: a secret that starts with `whsec_` is the Standard Webhooks serialisation, and
 * the base64 text after the prefix is the key (what a receiver using the
 * `standardwebhooks` package passes to `new Webhook(secret)`). Any other string is used
 * as it is, its UTF-8 bytes being the key; a receiver then verifies with
 * `new Webhook(secret, { format: 'raw' })` (the same bytes for an ASCII secret).
 */
import { createHmac } from 'node:crypto';

const PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Decoded keys by secret, so a busy sender does not decode the same secret per report. */
const keys = new Map<string, Buffer>();
const MAX_CACHED_KEYS = 1000;

/**
 * The HMAC key a secret stands for (see the module comment). Throws a `TypeError` for an
 * empty secret or a `whsec_` secret whose rest is not base64.
 */
export function signingKey(secret: string): Buffer {
  const cached = keys.get(secret);
  if (cached !== undefined) return cached;
  let key: Buffer;
  if (secret.startsWith(PREFIX)) {
    const encoded = secret.slice(PREFIX.length);
    if (!BASE64.test(encoded)) throw new TypeError('a whsec_ signing secret must be base64 after the prefix');
    key = Buffer.from(encoded, 'base64');
  } else {
    key = Buffer.from(secret, 'utf8');
  }
  if (key.length === 0) throw new TypeError('a signing secret must not be empty');
  if (keys.size >= MAX_CACHED_KEYS) keys.clear();
  keys.set(secret, key);
  return key;
}

/**
 * The `webhook-signature` header value for one attempt: `v1,` and the base64
 * HMAC-SHA256 of `id.timestamp.body` under the secret's key.
 *
 * `timestamp` is the attempt's time in unix seconds (the `webhook-timestamp` header);
 * `body` must be the exact bytes sent. Throws like {@link signingKey} for a bad secret.
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', signingKey(secret)).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

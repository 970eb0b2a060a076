/**
 * The demo's key check in front of the operator console (`/console/`): a browser proves it
 * holds the demo's key with the `sms_demo_key` cookie, which the demo's `/` sets (a local
 * demo only; a real host puts its own staff login here), and a script with `X-API-Key`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';

/** The cookie the demo's `/` sets. */
export const DEMO_KEY_COOKIE = 'sms_demo_key';

/** A digest of a key, for comparing two keys in constant time whatever their lengths. */
export function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** The console's `auth` hook for the demo: the request carries the demo's key. */
export function demoConsoleAuth(apiKey: string): (req: Request) => boolean {
  const expected = digest(apiKey);
  return (req) => {
    const header = req.headers['x-api-key'];
    let given = typeof header === 'string' ? header : null;
    for (const part of (req.headers.cookie ?? '').split(';')) {
      const [name, ...rest] = part.trim().split('=');
      if (name === DEMO_KEY_COOKIE) {
        try {
          given ??= decodeURIComponent(rest.join('='));
        } catch {
          return false;
        }
      }
    }
    return given !== null && given !== '' && timingSafeEqual(digest(given), expected);
  };
}

/**
 * The console's request guard: the host's `auth` hook on every request, and for every
 * action (a POST) a same-origin check (`Origin`, else `Referer`, must name the host the
 * request came to) and a CSRF token (double submit: a random value in an HttpOnly cookie,
 * and in each form its HMAC under a key made when the process starts, so a page of another
 * site can neither read nor forge it). Refusals are JSON `{ details, code }`.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { DashboardAuth } from './options.js';

/** The cookie holding the browser's random value. */
export const CSRF_COOKIE = 'sms_dashboard_csrf';
/** The form field holding the token. */
export const CSRF_FIELD = '_csrf';

/** The console's refusal codes and their statuses. */
export const DASHBOARD_REFUSALS = {
  DASHBOARD_FORBIDDEN: 403,
  CSRF_TOKEN_INVALID: 403,
  CROSS_ORIGIN: 403,
  VALIDATION_FAILED: 400,
  NOT_FOUND: 404,
  NOT_SUPPORTED: 409,
} as const;

/** A refusal of the console. */
export function refuse(res: Response, code: keyof typeof DASHBOARD_REFUSALS, details: string): void {
  res.status(DASHBOARD_REFUSALS[code]).set('Cache-Control', 'no-store').json({ details, code });
}

/** Refuses (403) a request the host's hook does not let in; a hook that throws counts as no. */
export function requireAuth(auth: DashboardAuth | null): RequestHandler {
  return (req, res, next) => {
    if (auth === null) {
      next();
      return;
    }
    Promise.resolve()
      .then(() => auth(req))
      .then(
        (allowed) => (allowed === true ? next() : refuse(res, 'DASHBOARD_FORBIDDEN', 'The host\'s auth hook did not allow this request')),
        () => refuse(res, 'DASHBOARD_FORBIDDEN', 'The host\'s auth hook did not allow this request'),
      );
  };
}

/** One cookie's value from the `Cookie` header (no dependency for the one cookie read). */
function cookieOf(req: Request, name: string): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return null;
}

/** The CSRF tokens of one console: its key lives as long as the process. */
export class CsrfTokens {
  readonly #key = randomBytes(32);

  #sign(value: string): string {
    return createHmac('sha256', this.#key).update(value).digest('base64url');
  }

  /** The token for `req`'s forms, setting the cookie when the browser has none yet. */
  tokenFor(req: Request, res: Response): string {
    let value = cookieOf(req, CSRF_COOKIE);
    if (value === null || !/^[A-Za-z0-9_-]{32,64}$/.test(value)) {
      value = randomBytes(24).toString('base64url');
      // Path `/`: the host mounts the console anywhere; SameSite=Strict adds a browser-side fence.
      res.append('Set-Cookie', `${CSRF_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict${req.secure ? '; Secure' : ''}`);
    }
    return this.#sign(value);
  }

  /** Whether `token` belongs to `req`'s cookie. */
  valid(req: Request, token: unknown): boolean {
    const value = cookieOf(req, CSRF_COOKIE);
    if (value === null || typeof token !== 'string') return false;
    const expected = Buffer.from(this.#sign(value));
    const given = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

/** Whether `req`'s `Origin` (else `Referer`) names the host it was sent to. */
export function sameOrigin(req: Request): boolean {
  const source = req.headers.origin ?? req.headers.referer;
  if (typeof source !== 'string' || source === '' || source === 'null') return false;
  try {
    return new URL(source).host.toLowerCase() === String(req.headers.host ?? '').toLowerCase();
  } catch {
    return false;
  }
}

/** Refuses an action without a same-origin source or without a valid token (403). */
export function requireCsrf(tokens: CsrfTokens): RequestHandler {
  return (req, res, next) => {
    if (!sameOrigin(req)) {
      refuse(res, 'CROSS_ORIGIN', 'Actions are taken only from the console\'s own pages (Origin or Referer of this host)');
      return;
    }
    if (!tokens.valid(req, (req.body as Record<string, unknown> | undefined)?.[CSRF_FIELD])) {
      refuse(res, 'CSRF_TOKEN_INVALID', 'The form\'s token is missing or stale: reload the page and try again');
      return;
    }
    next();
  };
}

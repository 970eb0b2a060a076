/**
 * The per-key request limit: express-rate-limit keyed by the authenticated principal, with
 * the draft-8 `RateLimit` headers, and its 429 answered through the router's errors.
 */
import { rateLimit, type Logger, type RateLimitInfo, type Store } from 'express-rate-limit';
import type { Request, RequestHandler } from 'express';
import { SmsError } from '../../errors.js';
import type { Principal } from '../../auth/principal.js';
import { principalOf } from '../authenticate.js';
import { secondsUntil, windowText } from './headers.js';
import type { PerKeyLimit, RequestLimitConfig } from './options.js';

/**
 * Resolves a principal's quota: `own` (the principal's own setting) when given, else the
 * configured limit. `where` names the option in the error for a bad value.
 */
export function limitFor(where: string, limit: PerKeyLimit, principal: Principal, own?: number): number {
  const value = own ?? (typeof limit === 'function' ? limit(principal) : limit);
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    // A verifier or limit function gave nonsense: fail loudly (500 + `error` event), not open.
    throw new TypeError(`${where}: the limit of principal "${principal.id}" must be an integer >= 0, got ${String(value)}`);
  }
  return value;
}

/**
 * Returns middleware, to run right after authentication, that counts the request against
 * the principal's quota and passes a 429 `RATE_LIMITED` error on when it is over.
 */
export function requestLimiter(config: RequestLimitConfig, store: Store | undefined, logger: Logger): RequestHandler {
  const window = windowText(config.windowMs);
  return rateLimit({
    windowMs: config.windowMs,
    limit: (_req, res) => {
      const principal = principalOf(res);
      return limitFor('rateLimit.requests.limit', config.limit, principal, principal.rateLimit);
    },
    keyGenerator: (_req, res) => principalOf(res).id,
    identifier: 'requests',
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    ...(store === undefined ? {} : { store }),
    logger,
    // 0 means "refuse everything" here on purpose; the library would warn about it.
    validate: { limit: false },
    handler: (req, _res, next) => {
      const info = (req as Request & { rateLimit: RateLimitInfo }).rateLimit;
      const retry = info.resetTime === undefined ? Math.ceil(config.windowMs / 1000) : secondsUntil(info.resetTime);
      next(new SmsError('RATE_LIMITED', `Too many requests: this key may make ${info.limit} per ${window}; retry in ${retry} s`));
    },
  });
}

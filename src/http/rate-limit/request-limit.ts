/**
 * The per-key request limit: an express-rate-limit `Store` keyed by the authenticated
 * principal, with the draft-8 `RateLimit` headers, and its 429 answered through the
 * router's errors.
 */
import type { ClientRateLimitInfo, Logger, Options, Store } from 'express-rate-limit';
import type { NextFunction, RequestHandler, Response } from 'express';
import { SmsError } from '../../errors.js';
import { isPromiseLike, settle } from '../../util/settle.js';
import type { Principal } from '../../auth/principal.js';
import { principalOf } from '../authenticate.js';
import { PolicyHeaders, secondsUntil, windowText } from './headers.js';
import type { PerKeyLimit, RateLimitHeaders, RequestLimitConfig } from './options.js';

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
 *
 * It speaks express-rate-limit's `Store` contract and writes the same draft-8 headers as
 * its middleware would (`RateLimit`, `RateLimit-Policy`, `Retry-After` when refused; not
 * `req.rateLimit`, which no stage after it reads), but without that middleware's per-request cost: five awaits, debug
 * calls that read `req.ip`, and a SHA-256 per request for the partition key. Its
 * misconfiguration checks are about keys derived from addresses; this limiter keys by
 * principal id, so none of them applies.
 */
export function requestLimiter(config: RequestLimitConfig, store: Store, logger: Logger, when: RateLimitHeaders): RequestHandler {
  const window = windowText(config.windowMs);
  const headers = new PolicyHeaders('requests', config.windowMs, when);
  const windowSeconds = Math.ceil(config.windowMs / 1000);
  try {
    // The stores read only `windowMs` (MemoryStore, rate-limit-redis), as in the failed-auth guard.
    const started = store.init?.({ windowMs: config.windowMs } as Options);
    if (started instanceof Promise) started.catch((error: unknown) => logger.error(error, 'express-rate-limit: async error during store initialization.'));
  } catch (error) {
    logger.error(error, 'express-rate-limit: error during store initialization.');
  }
  const counted = (res: Response, next: NextFunction, principal: Principal, hits: ClientRateLimitInfo): void => {
    let limit: number;
    try {
      limit = limitFor('rateLimit.requests.limit', config.limit, principal, principal.rateLimit);
    } catch (error) {
      next(error);
      return;
    }
    const over = hits.totalHits > limit;
    if (!headers.wanted(over)) {
      next();
      return;
    }
    const resetSeconds = hits.resetTime === undefined ? windowSeconds : secondsUntil(hits.resetTime);
    headers.write(res, principal.id, limit, limit - hits.totalHits, resetSeconds, over);
    if (!over) {
      next();
      return;
    }
    next(new SmsError('RATE_LIMITED', `Too many requests: this key may make ${limit} per ${window}; retry in ${resetSeconds} s`));
  };
  return (_req, res, next) => {
    const principal = principalOf(res);
    const hits = store.increment(principal.id);
    // A synchronous store (the default) is answered without a closure per request.
    if (isPromiseLike(hits)) settle(hits, (counts) => counted(res, next, principal, counts), next);
    else counted(res, next, principal, hits);
  };
}

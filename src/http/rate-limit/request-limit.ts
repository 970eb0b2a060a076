/**
 * The per-key request limit: an express-rate-limit `Store` keyed by the authenticated
 * principal, with the draft-8 `RateLimit` headers, and its 429 answered through the
 * router's errors.
 */
import { MemoryStore, type ClientRateLimitInfo, type Logger, type Options, type RateLimitInfo, type Store } from 'express-rate-limit';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { SmsError } from '../../errors.js';
import type { Principal } from '../../auth/principal.js';
import { principalOf } from '../authenticate.js';
import { partitionKey, secondsUntil, windowText } from './headers.js';
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
 * `req.rateLimit` as express-rate-limit sets it. Its deprecated `current` (the same as
 * `used`) is a getter, not enumerable, as there; defining it per request was measurable.
 */
class RequestLimitInfo implements RateLimitInfo {
  // Declared in express-rate-limit's order, so the object lists its fields alike.
  limit: number;
  used: number;
  remaining: number;
  resetTime: Date | undefined;
  key: string;

  constructor(limit: number, used: number, resetTime: Date | undefined, key: string) {
    this.limit = limit;
    this.used = used;
    this.remaining = Math.max(limit - used, 0);
    this.resetTime = resetTime;
    this.key = key;
  }

  get current(): number {
    return this.used;
  }
}

/**
 * Returns middleware, to run right after authentication, that counts the request against
 * the principal's quota and passes a 429 `RATE_LIMITED` error on when it is over.
 *
 * It speaks express-rate-limit's `Store` contract and writes the same draft-8 headers as
 * its middleware would (`RateLimit`, `RateLimit-Policy`, `Retry-After` when refused, and
 * `req.rateLimit`), but without that middleware's per-request cost: five awaits, debug
 * calls that read `req.ip`, and a SHA-256 per request for the partition key. Its
 * misconfiguration checks were about keys derived from addresses; this limiter keys by
 * principal id, so none of them applies.
 */
export function requestLimiter(config: RequestLimitConfig, store: Store = new MemoryStore(), logger: Logger): RequestHandler {
  const window = windowText(config.windowMs);
  const windowSeconds = Math.ceil(config.windowMs / 1000);
  try {
    // The stores read only `windowMs` (MemoryStore, rate-limit-redis), as in the failed-auth guard.
    const started = store.init?.({ windowMs: config.windowMs } as Options);
    if (started instanceof Promise) started.catch((error: unknown) => logger.error(error, 'express-rate-limit: async error during store initialization.'));
  } catch (error) {
    logger.error(error, 'express-rate-limit: error during store initialization.');
  }
  const counted = (req: Request, res: Response, next: NextFunction, key: string, principal: Principal, hits: ClientRateLimitInfo): void => {
    let limit: number;
    try {
      limit = limitFor('rateLimit.requests.limit', config.limit, principal, principal.rateLimit);
    } catch (error) {
      next(error);
      return;
    }
    const info = new RequestLimitInfo(limit, hits.totalHits, hits.resetTime, key);
    (req as Request & { rateLimit: RateLimitInfo }).rateLimit = info;
    const resetSeconds = info.resetTime === undefined ? windowSeconds : secondsUntil(info.resetTime);
    if (!res.headersSent) {
      res.append('RateLimit', `"requests"; r=${info.remaining}; t=${resetSeconds}`);
      res.append('RateLimit-Policy', `"requests"; q=${limit}; w=${windowSeconds}; pk=:${partitionKey(key)}:`);
    }
    if (hits.totalHits <= limit) {
      next();
      return;
    }
    if (!res.headersSent) res.setHeader('Retry-After', String(resetSeconds));
    next(new SmsError('RATE_LIMITED', `Too many requests: this key may make ${limit} per ${window}; retry in ${resetSeconds} s`));
  };
  return (req, res, next) => {
    const principal = principalOf(res);
    const key = principal.id;
    Promise.resolve(store.increment(key)).then((hits) => counted(req, res, next, key, principal, hits), next);
  };
}

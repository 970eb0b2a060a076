/**
 * Brute-force protection for keys: a per-address count of requests answered 401. An
 * address over its limit is answered 429 before its key is looked at, so guessing stops
 * even when a guess would have been right.
 */
import { ipKeyGenerator, type Options, type Store } from 'express-rate-limit';
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { SmsError } from '../../errors.js';
import { secondsUntil, setPolicyHeaders, windowText } from './headers.js';
import type { FailedAuthConfig } from './options.js';

/** The two halves of the guard, placed around the authentication stage. */
export interface FailedAuthGuard {
  /** Before authentication: refuses an address that has failed too often. */
  check: RequestHandler;
  /** Error middleware right after authentication: counts a 401 before it is answered. */
  count: ErrorRequestHandler;
}

/**
 * Returns the failed-authentication guard over an express-rate-limit `Store` that has `get`.
 *
 * Only failures are counted, and only once they are known; express-rate-limit's own
 * `skipSuccessfulRequests` counts every request first and takes successes back when they
 * finish, so a client with more than `limit` valid requests in flight would be refused.
 * The cost: attempts racing each other all read the count before any of them adds to it,
 * so one burst may overshoot the limit by the attempts it has in flight.
 *
 * @throws TypeError when the store has no `get`.
 */
export function failedAuthGuard(config: FailedAuthConfig, store: Store, report: (error: unknown) => void): FailedAuthGuard {
  const get = store.get?.bind(store);
  if (get === undefined) throw new TypeError('rateLimit.store("failed-auth") must return a Store with a `get` method');
  try {
    // The store reads only `windowMs` (MemoryStore, rate-limit-redis); no other option applies.
    const started = store.init?.({ windowMs: config.windowMs } as Options);
    if (started instanceof Promise) started.catch(report);
  } catch (error) {
    report(error);
  }
  const keyOf = (req: Request): string => ipKeyGenerator(req.ip ?? 'unknown', config.ipv6Subnet);
  const window = windowText(config.windowMs);

  let trustChecked = false;
  const check: RequestHandler = (req, res, next) => {
    if (!trustChecked) {
      trustChecked = true;
      // As express-rate-limit warns: with `trust proxy` true any client picks its own address.
      if (req.app.get('trust proxy') === true) {
        report(new Error('rateLimit.failedAuth: Express `trust proxy` is true, so a client can choose its address with X-Forwarded-For; set it to your proxies (a count or their addresses)'));
      }
    }
    const key = keyOf(req);
    Promise.resolve(get(key)).then((info) => {
      if (info === undefined || info.totalHits < config.limit) return next();
      const resetTime = info.resetTime ?? new Date(Date.now() + config.windowMs);
      const resetSeconds = secondsUntil(resetTime);
      if (resetSeconds === 0) return next();
      setPolicyHeaders(res, { name: 'failed-auth', key, limit: config.limit, windowMs: config.windowMs, remaining: 0, resetSeconds }, true);
      next(new SmsError('RATE_LIMITED', `Too many failed API key attempts from this address: at most ${config.limit} per ${window}; retry in ${resetSeconds} s`));
    }, next);
  };

  const count: ErrorRequestHandler = (error, req, _res, next) => {
    if (!(error instanceof SmsError) || error.status !== 401) {
      next(error);
      return;
    }
    // Counted before the 401 goes out, so a client's next attempt already sees it.
    Promise.resolve(store.increment(keyOf(req))).then(
      () => next(error),
      (storeError: unknown) => {
        report(storeError);
        next(error);
      },
    );
  };

  return { check, count };
}

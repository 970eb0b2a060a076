/**
 * Brute-force protection for keys: a per-address count of failed attempts, the requests
 * answered 401 and those refused 403 `IP_NOT_ALLOWED` (a key tried from an address it may
 * not be used from). An address over its limit is answered 429 before its key is looked at,
 * so guessing stops even when a guess would have been right.
 */
import { ipKeyGenerator, type ClientRateLimitInfo, type Options, type Store } from 'express-rate-limit';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { EventError, OptionError, SmsError } from '../../errors.js';
import { rememberRecent } from '../../util/remember-recent.js';
import { isPromiseLike, settle } from '../../util/settle.js';
import { PolicyHeaders, secondsUntil, windowText } from './headers.js';
import type { FailedAuthConfig } from './options.js';

/**
 * Returns the failed-authentication guard over an express-rate-limit `Store` that has `get`:
 * a function that wraps the authentication stage so that an address over its limit is
 * refused before its key is looked at, and each failed attempt is counted before it is
 * answered (so the client's next attempt already sees it).
 *
 * Only failures are counted, and only once they are known; express-rate-limit's own
 * `skipSuccessfulRequests` counts every request first and takes successes back when they
 * finish, so a client with more than `limit` valid requests in flight would be refused.
 * The cost: attempts racing each other all read the count before any of them adds to it,
 * so one burst may overshoot the limit by the attempts it has in flight.
 *
 * @throws TypeError when the store has no `get`.
 */
export function failedAuthGuard(config: FailedAuthConfig, store: Store, report: (error: unknown) => void): (authenticate: RequestHandler) => RequestHandler {
  const get = store.get?.bind(store);
  if (get === undefined) throw new OptionError('rateLimit.store("failed-auth") must return a Store with a `get` method');
  try {
    // The store reads only `windowMs` (MemoryStore, rate-limit-redis); no other option applies.
    const started = store.init?.({ windowMs: config.windowMs } as Options);
    if (started instanceof Promise) started.catch(report);
  } catch (error) {
    report(error);
  }
  const keyOf = addressKeys(config.ipv6Subnet);
  const window = windowText(config.windowMs);
  // Only refusals are ever answered by this limit, so its headers go out only with them.
  const headers = new PolicyHeaders('failed-auth', config.windowMs, 'refused');

  let trustChecked = false;
  const warnOnTrustAll = (req: Request): void => {
    trustChecked = true;
    // As express-rate-limit warns: with `trust proxy` true any client picks its own address.
    if (req.app.get('trust proxy') === true) {
      report(new EventError('RATE_LIMIT_SETUP', 'rateLimit.failedAuth: Express `trust proxy` is true, so a client can choose its address with X-Forwarded-For; set it to your proxies (a count or their addresses)'));
    }
  };

  /** Authenticates, counting a failed attempt; when `key` is already over its limit, refuses first. */
  const admit = (authenticate: RequestHandler, req: Request, res: Response, next: NextFunction, key: string, info: ClientRateLimitInfo | undefined): void => {
    if (info !== undefined && info.totalHits >= config.limit) {
      const resetSeconds = secondsUntil(info.resetTime ?? Date.now() + config.windowMs);
      if (resetSeconds > 0) {
        headers.write(res, key, config.limit, 0, resetSeconds, true);
        next(new SmsError('RATE_LIMITED', `Too many failed API key attempts from this address: at most ${config.limit} per ${window}; retry in ${resetSeconds} s`));
        return;
      }
    }
    authenticate(req, res, (error?: unknown) => {
      if (!isFailedAttempt(error)) {
        next(error);
        return;
      }
      settle(
        store.increment(key),
        () => next(error),
        (storeError: unknown) => {
          report(storeError);
          next(error);
        },
      );
    });
  };

  return (authenticate) => (req, res, next) => {
    if (!trustChecked) warnOnTrustAll(req);
    const key = keyOf(req);
    const known = get(key);
    // A synchronous store (the default) is answered without a closure per request.
    if (isPromiseLike(known)) settle(known, (info) => admit(authenticate, req, res, next, key, info), next);
    else admit(authenticate, req, res, next, key, known);
  };
}

/**
 * True for an answer that counts as a failed attempt: a 401 (no key, an unknown one, an
 * expired one), or a valid key used from an address outside its `allowedIps`, which is a
 * stolen key's first use as often as a client's misconfiguration.
 */
function isFailedAttempt(error: unknown): error is SmsError {
  return error instanceof SmsError && (error.status === 401 || error.code === 'IP_NOT_ALLOWED');
}

/**
 * Returns the counter key of a request's client address: `req.ip`, with IPv6 addresses
 * grouped by `ipv6Subnet` through express-rate-limit's `ipKeyGenerator`.
 *
 * This runs on every request, so it is kept cheap. `ipKeyGenerator` tests every address
 * against the IPv6 pattern and parses IPv6 ones with a big-number library (several
 * microseconds each), so keys are remembered per address. And without Express's
 * `trust proxy` (the default), `req.ip` is by definition the socket's address, which is
 * read directly rather than through `req.ip`'s parse of `X-Forwarded-For`.
 */
export function addressKeys(ipv6Subnet: number | false): (req: Request) => string {
  const keyOfAddress = rememberRecent((address: string) => ipKeyGenerator(address, ipv6Subnet), 4096);
  return (req) => keyOfAddress((req.app.get('trust proxy') === false ? req.socket.remoteAddress : req.ip) ?? 'unknown');
}

/**
 * `createRateLimiters`: builds the three limits from the resolved `rateLimit` config, each
 * over its own store, and hands the router what it places in the request path.
 */
import type { Logger, Store } from 'express-rate-limit';
import type { RequestHandler, Response } from 'express';
import { isPromiseLike } from '../../util/settle.js';
import { principalOf } from '../authenticate.js';
import type { Emit } from '../../observe/events.js';
import { messageBudget, NOTHING_TAKEN, type ChargeMessages } from '../message-budget.js';
import { failedAuthGuard } from './failed-auth.js';
import { MemoryRateLimitStore } from './memory-windows.js';
import type { RateLimitConfig, RateLimitStoreName } from './options.js';
import { requestLimiter } from './request-limit.js';
import { OptionError } from '../../errors.js';

/** What the router places in the request path. */
export interface RateLimiters {
  /**
   * Wraps the authentication stage: the failed-auth check before it, then the count of its
   * failed attempts and the per-key request limit after it. One middleware, not four: each Express
   * layer costs a turn of its router per request.
   */
  around(authenticate: RequestHandler): RequestHandler;
  /** The message budget; the send handler calls it once the message count is known, and gives back what a refused request took. */
  chargeMessages: ChargeMessages;
  /**
   * Gives back the per-key request limit's count of this request (the store's `decrement`),
   * for a request answered with a replay: it was counted before its body was read.
   */
  refundRequest(res: Response): void;
  /** Stops the timers of the memory stores made here; a host's stores are left alone. */
  close(): Promise<void>;
}

/**
 * Creates the limiters of `config` (`false`: none). Store errors and express-rate-limit's
 * misconfiguration reports go to the `error` event.
 *
 * @throws TypeError when `config.store` returns something that is not a new Store.
 */
export function createRateLimiters(config: RateLimitConfig | false, emit: Emit): RateLimiters {
  if (config === false) {
    return { around: (authenticate) => authenticate, chargeMessages: () => NOTHING_TAKEN, refundRequest: () => undefined, close: async () => undefined };
  }
  const report = (error: unknown): void => emit('error', { error, source: 'request' });
  const logger: Logger = {
    error: (error, message) => report(message === undefined ? error : new Error(message, { cause: error })),
    warn: (error, message) => report(message === undefined ? error : new Error(message, { cause: error })),
  };
  const own: Store[] = [];
  const made = new Set<Store>();
  const storeFor = (name: RateLimitStoreName): Store => {
    const store = config.store?.(name) ?? new MemoryRateLimitStore();
    if (config.store === null) own.push(store);
    if (typeof store !== 'object' || store === null || typeof store.increment !== 'function') {
      throw new OptionError(`rateLimit.store("${name}") must return an express-rate-limit Store`);
    }
    if (made.has(store)) throw new OptionError(`rateLimit.store("${name}") must return a new Store for each limiter (with its own prefix)`);
    made.add(store);
    return store;
  };

  const guard = config.failedAuth === false ? null : failedAuthGuard(config.failedAuth, storeFor('failed-auth'), report);
  const requestStore = config.requests === false ? null : storeFor('requests');
  const perKey = config.requests === false ? null : requestLimiter(config.requests, requestStore!, logger, config.headers);
  const chargeMessages: ChargeMessages =
    config.messages === false ? () => NOTHING_TAKEN : messageBudget(config.messages, config.budgetStore, config.headers);

  return {
    around: (authenticate) => {
      const guarded = guard === null ? authenticate : guard(authenticate);
      if (perKey === null) return guarded;
      return (req, res, next) => {
        guarded(req, res, (error?: unknown) => {
          if (error === undefined || error === null) perKey(req, res, next);
          else next(error);
        });
      };
    },
    chargeMessages,
    refundRequest: (res) => {
      if (requestStore === null) return;
      try {
        // A store that cannot give back (or fails to) costs the client one request, no more.
        const giving = requestStore.decrement(principalOf(res).id) as unknown;
        if (isPromiseLike(giving)) Promise.resolve(giving).catch(report);
      } catch (error) {
        report(error);
      }
    },
    close: async () => {
      for (const store of own) await store.shutdown?.();
    },
  };
}

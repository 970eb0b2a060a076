/**
 * The per-key message budget: every message of a send request counts, taken after
 * validation (when the count is known) and before anything is stored, and given back when
 * the request then stores nothing, so the budget counts the messages stored.
 */
import type { Response } from 'express';
import { SmsError } from '../errors.js';
import { principalOf } from './authenticate.js';
import type { BudgetStore, BudgetTake } from './rate-limit/budget-store.js';
import { isPromiseLike } from '../util/settle.js';
import { PolicyHeaders, secondsUntil, windowText } from './rate-limit/headers.js';
import type { MessageBudgetConfig, RateLimitHeaders } from './rate-limit/options.js';
import { limitFor } from './rate-limit/request-limit.js';

/** Messages taken from a caller's budget for one request. */
export interface MessageCharge {
  /**
   * Gives the messages back: their request was refused, or failed, after they were taken,
   * and stored none of them. Corrects the answer's `"messages"` RateLimit entry if it has
   * one. Returns a promise only when the store answered with one; rejects when the store
   * fails (the count then stays taken).
   */
  giveBack(): Promise<void> | undefined;
}

/**
 * Takes `count` messages from the authenticated caller's budget, or throws (or rejects): the
 * request is then refused whole and nothing of it may be stored. Adds the `"messages"`
 * policy to the `RateLimit` headers either way. Answers with a promise only when its store
 * did.
 */
export type ChargeMessages = (res: Response, count: number) => MessageCharge | Promise<MessageCharge>;

/** The charge of a request that took nothing (no budget, or a store that cannot give back). */
export const NOTHING_TAKEN: MessageCharge = { giveBack: () => undefined };

/** Returns the budget check of {@link MessageBudgetConfig} over `store`. */
export function messageBudget(config: MessageBudgetConfig, store: BudgetStore, when: RateLimitHeaders): ChargeMessages {
  const window = windowText(config.windowMs);
  const headers = new PolicyHeaders('messages', config.windowMs, when);
  return (res, count) => {
    const principal = principalOf(res);
    const limit = limitFor('rateLimit.messages.limit', config.limit, principal);
    if (count > limit) {
      // Larger than the whole budget: no wait makes it fit, and a 429 with Retry-After
      // would send a well-behaved client into retrying forever. It must split the request.
      throw new SmsError('VALIDATION_FAILED', `messages: ${count} messages are more than this key may send per ${window} (${limit}); split the request`);
    }
    const taking = store.take(principal.id, count, limit, config.windowMs);
    if (isPromiseLike(taking)) return Promise.resolve(taking).then((result) => charged(res, principal.id, count, limit, result));
    return charged(res, principal.id, count, limit, taking);
  };

  function charged(res: Response, key: string, count: number, limit: number, result: BudgetTake): MessageCharge {
    if (!result.taken) {
      const resetSeconds = secondsUntil(result.resetTime);
      const remaining = limit - result.used;
      headers.write(res, key, limit, remaining, resetSeconds, true);
      // It fits once the window turns over: 429 with Retry-After says exactly "wait".
      throw new SmsError('RATE_LIMITED', `Message budget exceeded: ${count} messages asked, ${remaining} of ${limit} left per ${window}; retry in ${resetSeconds} s`);
    }
    if (headers.wanted(false)) headers.write(res, key, limit, limit - result.used, secondsUntil(result.resetTime), false);
    if (store.giveBack === undefined) return NOTHING_TAKEN;
    return {
      giveBack: () => {
        const giving = store.giveBack!(key, count);
        const corrected = (): void => headers.rewrite(res, limit - (result.used - count), secondsUntil(result.resetTime));
        if (isPromiseLike(giving)) return Promise.resolve(giving).then(corrected);
        corrected();
        return undefined;
      },
    };
  }
}

/**
 * What the operator console (`sms-outbox/dashboard`) reads of a router besides its storage
 * and events: the carrier's connections now, the principals of a `staticKeys` table, and
 * each principal's limits and spend-cap periods as the send path applies them. Operator
 * data only: no customer-facing route serves it.
 */
import type { Principal } from '../auth/principal.js';
import { keyTableOf } from '../auth/owner-tables.js';
import type { BindStatus } from '../delivery/contract.js';
import { limitFor } from '../http/rate-limit/request-limit.js';
import { SpendCalendar } from '../lifecycle/spend-periods.js';
import type { SmsRouterConfig } from './options.js';

/** A per-key limit as it applies to one principal: so many per window. */
export interface AppliedLimit {
  limit: number;
  windowMs: number;
}

/** The counter keys of the spend-cap periods an instant falls in (what `storage.countedUnits` is asked). */
export interface SpendPeriodKeys {
  day: string;
  month: string;
}

/** The router's operator read-outs; see the module notes. */
export interface OperatorView {
  /** Each carrier connection now (`DeliveryAdapter.status`); `null` when the adapter does not say. */
  carrierStatus(): BindStatus[] | null;
  /** The principals of the router's `verifyKey` when it is a `staticKeys` table, in table order; `null` for another verifier. */
  principals(): readonly Principal[] | null;
  /** The spend-cap counters of the day and month `at` falls in, in the router's `spendCaps.timeZone`. */
  spendPeriods(at: number): SpendPeriodKeys;
  /** `principal`'s request limit and message budget (`null`: that limit is off). */
  limitsOf(principal: Principal): { requests: AppliedLimit | null; messages: AppliedLimit | null };
}

/** The operator read-outs of the router `config` describes. */
export function operatorView(config: SmsRouterConfig): OperatorView {
  const calendar = new SpendCalendar(config.spendCaps.timeZone);
  const { delivery, rateLimit } = config;
  return {
    carrierStatus: () => delivery.status?.() ?? null,
    principals: () => {
      const table = keyTableOf(config.verifyKey);
      return table === undefined ? null : [...table.values()];
    },
    spendPeriods: (at) => {
      const periods = calendar.at(at);
      return { day: periods.day.key, month: periods.month.key };
    },
    limitsOf: (principal) => {
      const requests = rateLimit === false ? false : rateLimit.requests;
      const messages = rateLimit === false ? false : rateLimit.messages;
      return {
        requests: requests === false ? null : { limit: limitFor('rateLimit.requests.limit', requests.limit, principal, principal.rateLimit), windowMs: requests.windowMs },
        messages: messages === false ? null : { limit: limitFor('rateLimit.messages.limit', messages.limit, principal), windowMs: messages.windowMs },
      };
    },
  };
}

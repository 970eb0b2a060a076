/**
 * Who is calling: what a key verifier returns for a valid key.
 */
import type { ReportFormat } from '../dlr/payload.js';
import type { NumberPolicy } from '../numbers/policy.js';
import type { ExpiresAt } from './expiry.js';
import type { RetainText } from '../lifecycle/retain-text.js';
import { grants, grantsOf, permissionOf, type Scope } from './scopes.js';

export type { Permission, Scope, ScopeAlias } from './scopes.js';
export type { ExpiresAt } from './expiry.js';

/** A key's owner and what it may do. */
export interface Principal {
  /** Stable id of the owner; messages and status lookups are scoped to it. */
  id: string;
  /**
   * What it may do: `send:quick`, `send:premium`, `read` (the status lookups), `cancel`,
   * `preview`; a call outside them is refused with 403. `quick` and `premium`, the names of
   * 0.1.0, grant their send plus `read`, `cancel` and `preview`; an empty list grants `read`
   * and `cancel` (docs/keys.md#scopes). Default: everything.
   */
  scopes?: readonly Scope[];
  /** A disabled key is known but refused with 403. */
  disabled?: boolean;
  /**
   * When its key stops working: from then on it is refused with 401 `KEY_EXPIRED` and a
   * `key.expired` event. A `Date`, epoch ms, or an RFC 3339 date-time with its offset. A
   * verifier returns, for each key, the expiry of that key (docs/keys.md#expiry). Default: never.
   */
  expiresAt?: ExpiresAt;
  /**
   * The client addresses (`req.ip`, so behind the host's `trust proxy`) its keys may be used
   * from, as IPv4 or IPv6 CIDR blocks or single addresses; a request from any other is
   * refused with 403 `IP_NOT_ALLOWED` and counts as a failed attempt of that address.
   * Default: any address.
   */
  allowedIps?: readonly string[];
  /**
   * Profile codes it owns. Used by the default profile resolver; a custom resolver may
   * ignore it.
   */
  profiles?: readonly string[];
  /** Signs its delivery reports and inbound webhooks (`whsec_...`), overriding the router's `dlr.secret`. */
  callbackSecret?: string;
  /**
   * The shape of its delivery reports: `envelope` (the default, the provider's published
   * webhook, fields under `data`) or `flat` (the same fields at the top level, with `reason`),
   * for receivers written to read `external_id` and `status` there
   * (docs/delivery-reports.md#payload). Kept with each message it sends with a callback URL,
   * so its report has the format the principal had when the message was accepted, whichever
   * instance sends it.
   */
  reportFormat?: ReportFormat;
  /**
   * `pull`: its delivery reports are never POSTed (a `dlr_callback_url` is ignored), only read
   * from `GET {base}/reports` (docs/reports-pull.md); a profile's `reportDelivery` may say so
   * for its own messages. Default `push`.
   */
  reportDelivery?: 'push' | 'pull';
  /**
   * Where its delivery reports go once their `dlr_callback_url` has failed every attempt of
   * the retry schedule: the schedule is tried again there, signed alike (docs/callbacks.md).
   * Read when the main URL gives up. Default: none (the report fails).
   */
  callbackFailoverUrl?: string;
  /**
   * Where the mobile-originated messages sent to its profiles' codes are forwarded, for the
   * profiles without an `inboundUrl` of their own (docs/inbound.md). Default: none.
   */
  inboundUrl?: string;
  /** Its own request rate limit (requests per window), overriding the router's default. */
  rateLimit?: number;
  /**
   * Its share of the carrier when several principals have messages queued: a principal of
   * weight 2 has two messages claimed for each one of a principal of weight 1. A positive
   * number; default 1.
   */
  weight?: number;
  /**
   * The SMS units its keys may have stored in one day of the router's `spendCaps.timeZone`
   * (counted from midnight there), across every instance sharing the storage; a request
   * that would pass it is refused with 429 `SPEND_CAP_REACHED` and a `Retry-After` to the
   * next midnight, and a `spend_cap.warning` event marks 80% (docs/keys.md#spend-caps). An
   * integer from 0. Default: no cap.
   */
  dailyUnits?: number;
  /** As `dailyUnits`, per calendar month of the same zone. Default: no cap. */
  monthlyUnits?: number;
  /**
   * How long its messages' texts are kept, for the profiles without a `retainText` of their
   * own: `always` (the default), `until-final` or `days:N` (docs/retain-text.md).
   */
  retainText?: RetainText;
  /** The most messages it may have queued at once (the router's `backlog.perKey` otherwise). */
  maxQueued?: number;
  /**
   * Which recipients it may send to, for the profiles without a `numbers` of their own:
   * `mobile` (the default), `valid`, `possible` or `digits` (docs/numbers.md).
   */
  numbers?: NumberPolicy;
}

/**
 * Maps an API key to its principal, or `null` when the key is not valid. Called on every
 * request, so a verifier backed by a database should cache.
 */
export type KeyVerifier = (apiKey: string) => Promise<Principal | null> | Principal | null;

/**
 * True when the principal's `scopes` grant `scope` (no `scopes` grants everything); an alias
 * is asked as its send (`'quick'` as `'send:quick'`).
 */
export function hasScope(principal: Principal, scope: Scope): boolean {
  return grants(grantsOf(principal.scopes), permissionOf(scope));
}

/**
 * Who is calling: what a key verifier returns for a valid key.
 */
import type { ReportFormat } from '../dlr/payload.js';
import type { NumberPolicy } from '../numbers/policy.js';

/** What a key may do: send through the quick endpoint, the premium endpoint, or both. */
export type Scope = 'quick' | 'premium';

/** A key's owner and what it may do. */
export interface Principal {
  /** Stable id of the owner; messages and status lookups are scoped to it. */
  id: string;
  /** Endpoints it may use. Default: both. */
  scopes?: readonly Scope[];
  /** A disabled key is known but refused with 403. */
  disabled?: boolean;
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

/** True when the principal may use `scope` (no `scopes` means every scope). */
export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes === undefined || principal.scopes.includes(scope);
}

/**
 * The public options of delivery reports, and the complete config they resolve to
 * (resolved in router/config-dlr.ts, with the router's other options).
 */
import type { AddressAllowance } from './address-guard.js';
import type { HostResolver } from './post.js';

/** How delivery reports (DLR callbacks) are sent. Every field is optional. */
export interface DlrOptions {
  /**
   * The signing secret for reports whose message has no `callbackSecret` of its own (a
   * per-message secret wins). `whsec_<base64>` is the Standard Webhooks form; any other
   * string is used as raw UTF-8 bytes. Default: none, reports are sent unsigned.
   */
  secret?: string;
  /**
   * Delay before each attempt, ms, counted from the end of the previous one; its length
   * is the number of attempts. The first entry must be 0 (the first attempt is made as
   * soon as the message is terminal). Each later delay is spread by +-10% and stretched to
   * a longer `Retry-After`. Default: `[0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h]`.
   */
  schedule?: readonly number[];
  /** Total time one attempt may take (connect, send, headers, body), ms. Default 15000. */
  timeoutMs?: number;
  /** Attempts in flight at once, over all receivers. Default 64. */
  concurrency?: number;
  /** Attempts in flight at once to one receiver host, so a slow one cannot take every slot. Default 8. */
  perHostConcurrency?: number;
  /**
   * Whether reports may go to private, loopback, link-local or other internal addresses:
   * `true` (all), `false` (none), or a list of IPs and CIDR ranges that are allowed, such as
   * `['127.0.0.0/8', '::1/128']`. For development and tests. Default `false`.
   */
  allowPrivateAddresses?: boolean | readonly string[];
  /** How often storage is asked for due reports, ms. Default 500. */
  pollIntervalMs?: number;
  /**
   * How long a claimed report is reserved for this instance, ms; after that another
   * instance (or this one, after a restart) may send it. Must exceed `timeoutMs`.
   * Default `2 * timeoutMs + 5000`: one attempt waiting for its host plus its own.
   */
  leaseMs?: number;
  /** At most this many reports are claimed per storage call. Default `concurrency`. */
  batchSize?: number;
}

/** {@link DlrOptions} resolved: every field present and checked. Internal. */
export interface DlrConfig {
  /** Global signing secret, or `null`. */
  secret: string | null;
  /** Delays before each attempt, ms; `schedule[0]` is 0. */
  schedule: readonly number[];
  /** Total time per attempt, ms. */
  timeoutMs: number;
  /** Attempts in flight overall. */
  concurrency: number;
  /** Attempts in flight per host. */
  perHostConcurrency: number;
  /** Which internal addresses are allowed. */
  allowance: AddressAllowance;
  /** Poll interval, ms. */
  pollIntervalMs: number;
  /** Claim lease, ms. */
  leaseMs: number;
  /** Claim batch size. */
  batchSize: number;
  /** The `user-agent` sent. */
  userAgent: string;
  /** How host names are resolved; `undefined` means `dns.lookup`. Not a public option. */
  resolve?: HostResolver;
}

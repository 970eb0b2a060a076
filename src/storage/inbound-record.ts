/**
 * The records of the premium MO flow in storage: inbound (mobile-originated) messages with
 * the webhook that forwards each one to its customer, and the opt-out list. Part of the
 * storage contract (contract.ts re-exports them), kept in a file of their own.
 *
 * @module
 */
import type { CallbackAttempt, CallbackState } from './callback-record.js';
import type { CallbackListQuery, ReplaySelection } from './callback-list.js';
import type { ListPosition } from './message-list.js';
import type { ClaimOptions, InsertLease } from './claim-options.js';

/** A mobile-originated message as the router stores it, before it is stored. */
export interface NewInbound {
  /** The id the service assigned (`message_ref` in the webhook); unique. */
  ref: string;
  /** The customer (principal) that owns the number it was sent to, or `null` when none does. */
  principalId: string | null;
  /** The owner's profile for that number, or `null` when no owner was found. */
  profileCode: string | null;
  /** The subscriber's number, international digits without `+`. */
  from: string;
  /** The short code (or number) it was sent to. */
  to: string;
  /** The text, multipart messages reassembled. */
  text: string;
  /** When it arrived, epoch ms. */
  receivedAt: number;
  /** The customer's inbound URL, where the webhook goes; `null`: stored, not forwarded. */
  callbackUrl: string | null;
  /** The secret that signs its webhook (the principal's `callbackSecret`), if any. */
  callbackSecret: string | null;
  /** The webhook's id (`uid` and `webhook-id`), stable across retries; `null` without a URL. */
  uid: string | null;
  /**
   * The W3C trace context (`traceparent`) of the span of its arrival, when the router traced
   * it (OpenTelemetry): its webhook attempts are recorded in that trace. Absent when not
   * traced. Optional to store: a storage that drops it loses only the link for the attempts
   * it hands back from a claim (a retry), which then are not recorded.
   */
  traceparent?: string | null;
}

/** A stored inbound message, with the state of its webhook. */
export interface InboundRecord extends NewInbound {
  /** The webhook's state, when it has a URL; the same shape as a delivery report's. */
  callback: CallbackState | null;
}

/** An inbound webhook due to be sent ({@link InboundStorage.claimInbound}). */
export interface DueInbound {
  /** The webhook's uid. */
  uid: string;
  /** Attempts made before this one. */
  attempts: number;
  /** The inbound message it forwards. */
  inbound: InboundRecord;
}

/** One number opted out of one short code. */
export interface OptOutEntry {
  /** The short code (sender) the subscriber opted out of. */
  shortCode: string;
  /** The subscriber's number, international digits without `+`. */
  number: string;
  /** When it was recorded, epoch ms. */
  createdAt: number;
}

/** A (short code, number) pair to look up in the opt-out list. */
export interface OptOutKey {
  /** The short code (a message's sender). */
  shortCode: string;
  /** The subscriber's number (a message's recipient). */
  number: string;
}

/** What {@link InboundStorage.insertInbound} does besides storing the message. */
export interface InboundInsertOptions {
  /** Stores its webhook leased to `owner` until `until`, as a report lease does (the sender posts it at once). */
  lease?: InsertLease;
  /**
   * In the same atomic step, opts the sender (`from`) out of the short code (`to`): `true`
   * for a stop keyword, `false` (opt back in) for a start keyword. Left out: no change.
   */
  optOut?: boolean;
  /**
   * Stores nothing, and changes no opt-out, when the newest inbound message stored from this
   * `from` to this `to` was stored with the same `once.key` and received at or after
   * `once.since`: it then resolves `{ optOutChanged: false, duplicate: true }`. The router
   * passes a key of the message's sender, recipient and text, so a carrier's redelivery of a
   * message it already handed over (its answer lost in a crash) is stored and forwarded once;
   * comparing with the newest only keeps a subscriber's STOP, START, STOP all three. The key
   * is stored with the message. An adapter that ignores this option stores every delivery.
   */
  once?: { key: string; since: number };
}

/**
 * One part of a long (concatenated) MO message, kept until its message is whole
 * ({@link InboundStorage.storeInboundPart}).
 */
export interface InboundPart {
  /**
   * The message's key, the same on each of its parts: the router's, from the sender, the
   * recipient and the carrier's concatenation reference and part count. At most 200 characters.
   */
  key: string;
  /** This part's 1-based number. */
  seq: number;
  /** How many parts the message has. */
  total: number;
  /** This part's text. */
  text: string;
  /** When this part arrived, epoch ms. */
  receivedAt: number;
}

/** One page of a principal's inbound webhooks ({@link InboundStorage.listInboundWebhooks}), newest arrival first. */
export interface InboundWebhookPage {
  /** The matching inbound messages, newest arrival first, at most the query's `limit`. */
  inbound: InboundRecord[];
  /** Where the next page starts (the last message's `receivedAt` as `createdAt`, and its insertion order), or `null` when none follows. */
  next: ListPosition | null;
}

/**
 * The optional part of the storage contract for inbound messages and opt-outs: the bundled
 * adapters have it; an adapter without it leaves MO forwarding and opt-outs off (the
 * `message.inbound` event still fires). An adapter has all of these methods or none.
 *
 * What it promises: an inbound message is stored with its pending webhook (and the opt-out
 * change it carries) in one atomic step, so once `insertInbound` resolves (and the carrier
 * is answered) a crash cannot lose the webhook; a claimed webhook is leased to one owner
 * until its lease ends. A message the carrier delivers again is stored once when the router
 * asks so ({@link InboundInsertOptions.once}); what the adapter does not promise is that two
 * such deliveries stored at the same moment by two instances are told apart (forwarding stays
 * at-least-once).
 *
 * `storeInboundPart` is optional on its own: without it the parts of a long MO are joined in
 * the memory of the instance they reached, so with several instances a message whose parts
 * reach different instances arrives in pieces.
 */
export interface InboundStorage {
  /**
   * Stores `message` with its pending webhook when it has a URL (due at once, leased under
   * `options.lease` if given), and applies `options.optOut` to (`to`, `from`) in the same
   * step. Resolves with whether the opt-out list changed.
   */
  insertInbound(message: NewInbound, options?: InboundInsertOptions): Promise<{ optOutChanged: boolean; duplicate?: true }>;
  /**
   * Stores `part` (replacing a part stored before with the same `key` and `seq`) and resolves
   * with every part stored under its `key`, in `seq` order, this one included: one atomic
   * step, so of two calls for one key at the same time, on any instance, the later one sees
   * the earlier one's part. Whether the message is whole, and which parts belong to it, is
   * the router's decision, never the adapter's. `purgeInbound` deletes parts received before
   * its `before`.
   */
  storeInboundPart?(part: InboundPart): Promise<InboundPart[]>;
  /**
   * Webhook recovery (`GET {base}/callbacks?kind=inbound`), optional with
   * {@link replayInboundWebhooks} (both or neither): one page of the principal's inbound
   * webhooks in the states `query` asks for (pending and failed when it names none), newest
   * arrival first (`receivedAt`, then insertion order), strictly after `query.after`,
   * received in `[since, until)`, at most `query.limit`. Served by an index on the principal
   * and the webhook's state: a page costs about its own size.
   */
  listInboundWebhooks?(query: CallbackListQuery): Promise<InboundWebhookPage>;
  /**
   * Makes each of the principal's `failed` inbound webhooks that `selection` names (refs of
   * inbound messages, or a range of arrival) pending again, unleased and due at `now`, its
   * attempts kept and its retry schedule started anew (`CallbackState.restartedAfter`).
   * Pending and delivered ones, and another principal's, are left as they are. Returns how
   * many were made pending.
   */
  replayInboundWebhooks?(selection: ReplaySelection, now: number): Promise<number>;
  /** Leases up to `limit` pending inbound webhooks that are due, oldest due first. */
  claimInbound(options: ClaimOptions): Promise<DueInbound[]>;
  /** Hands claimed inbound webhooks back without an attempt, claimable again at `until`. */
  deferInbound(uids: readonly string[], until: number): Promise<void>;
  /** Records an attempt of inbound webhook `uid` and ends its lease; ignored once finished. */
  recordInboundAttempt(uid: string, attempt: CallbackAttempt): Promise<void>;
  /** Inbound messages, newest first, at most `limit`: all, or those of one principal. */
  listInbound(options: { principalId?: string; limit: number }): Promise<InboundRecord[]>;
  /**
   * Deletes up to `limit` inbound messages received before `before` whose webhook is not
   * pending; returns how many. Every part ({@link InboundStorage.storeInboundPart}) received
   * before `before` goes too, uncounted and not bounded by `limit`: the retention sweep calls
   * again only while messages fill `limit`, and calls with `limit` 0, for the parts alone,
   * under `retention: false`.
   */
  purgeInbound(before: number, limit: number): Promise<number>;
  /**
   * Opts `number` out of `shortCode` (`optedOut: true`, recorded at `at`) or back in
   * (`false`). Resolves with whether the list changed.
   */
  setOptOut(key: OptOutKey, optedOut: boolean, at: number): Promise<boolean>;
  /** For each key, in order, whether its number is opted out of its short code. */
  findOptOuts(keys: readonly OptOutKey[]): Promise<boolean[]>;
  /**
   * The opt-out list, ordered by short code then number, at most `limit`: all of it or one
   * short code's, from after `after` (the last entry of the previous page) when given.
   */
  listOptOuts(options: { shortCode?: string; limit: number; after?: OptOutKey }): Promise<OptOutEntry[]>;
}

/** A storage with inbound webhook recovery. */
export type InboundRecoveryStorage = Required<Pick<InboundStorage, 'listInboundWebhooks' | 'replayInboundWebhooks'>>;

/** Every method of {@link InboundStorage} but the optional `storeInboundPart`: an adapter has all of them or none. */
export const INBOUND_METHODS = [
  'insertInbound',
  'claimInbound',
  'deferInbound',
  'recordInboundAttempt',
  'listInbound',
  'purgeInbound',
  'setOptOut',
  'findOptOuts',
  'listOptOuts',
] as const satisfies readonly (keyof InboundStorage)[];

/**
 * The storage contract: where messages, their parts, their states and their pending
 * delivery reports live. Every adapter (memory, SQLite, PostgreSQL, or the host's own)
 * implements {@link Storage} and passes the contract suite in `sms-outbox/testing`.
 *
 * What the contract promises:
 * - `insertMessages` stores every message of a request or none of them, leased at once
 *   when a lease is given (the instance that accepted them submits them without a claim).
 * - A claimed message is leased to one owner until the lease ends; no other claimer gets
 *   it before then, and a crashed owner's messages are claimed again after it.
 * - States only move forward (see `lifecycle/states.ts`): once terminal, nothing changes a
 *   message's state, and a repeated receipt is reported as a duplicate.
 * - When a message becomes terminal and has a callback URL, its pending delivery report
 *   is stored in the same atomic step, so a crash cannot lose it; leased at once when a
 *   receipt carries a report lease (the instance that applied it sends it without a claim).
 *
 * - Claims are fair (see {@link Storage.claimMessages}): transactional before bulk, principals
 *   with queued messages in turn by weight, each principal's messages in acceptance order.
 * - A request's idempotency record ({@link IdempotencyRecord}) is stored in the same atomic
 *   step as its messages, and one principal's key is taken by at most one request until it
 *   expires: two requests with the same key store the messages of one of them.
 *
 * What it does NOT promise: a strict order between messages (the turns are exact for one
 * writer and approximate when two instances accept for one principal at once), exactly-once
 * submission (a lease that ends while its owner still works lets another owner submit
 * again: delivery is at-least-once), or that lookups see a write made by another instance
 * in the same millisecond.
 */
import type { MessageState, Outcome, StatusReason, TerminalState } from '../lifecycle/states.js';
import type { IdempotencyRecord } from './idempotency-record.js';

/** Which endpoint accepted a message. */
export type Endpoint = 'quick' | 'premium';

/** The field name the caller used for the recipient, echoed in responses and reports. */
export type RecipientField = 'recipient' | 'mobile_number' | 'to';

/** The field name the caller used for its own reference, echoed in responses and reports. */
export type ReferenceField = 'external_id' | 'message_id';

/** The text encoding a message goes out in. */
export type Encoding = 'GSM-7' | 'UCS-2';

/**
 * A message's class, from its profile: every due `transactional` message (one-time
 * passwords, alerts) is claimed before any `bulk` one (campaigns). Default `bulk`.
 */
export type Priority = 'transactional' | 'bulk';

/** A message as accepted from a request, before it is stored. */
export interface NewMessage {
  /** The id the service assigned (`message_ref`); unique. */
  ref: string;
  /** The principal (key owner) that sent it; lookups are scoped to it. */
  principalId: string;
  /** The endpoint that accepted it. */
  endpoint: Endpoint;
  /** The sender profile it goes out under. */
  profileCode: string;
  /** The sender address (short code or alphanumeric id) the carrier is given. */
  sender: string;
  /** Destination number, international digits without `+`. */
  recipient: string;
  /** The text. */
  text: string;
  /** Passed on as given; default 1. */
  messageType: number;
  /** Passed on as given; default 1. */
  reqType: number;
  /** The caller's reference (not unique). */
  externalId: string;
  /** Field name used for the recipient in the request. */
  recipientField: RecipientField;
  /** Field name used for the reference in the request. */
  referenceField: ReferenceField;
  /** SMS units (parts) the text needs. */
  smsCount: number;
  /** The encoding the parts are sent in. */
  encoding: Encoding;
  /** Where the delivery report goes, if anywhere. */
  callbackUrl: string | null;
  /** Secret that signs this message's delivery report (the principal's), if any. */
  callbackSecret: string | null;
  /** When it was accepted, in epoch milliseconds. */
  createdAt: number;
  /** Its class: transactional messages are claimed before bulk ones. */
  priority: Priority;
  /**
   * Its principal's share of the carrier against the other principals with queued messages
   * of its class (the principal's `weight`, default 1): in each turn a principal of weight 2
   * has two messages claimed where one of weight 1 has one. Read when the message is stored;
   * not part of the record.
   */
  weight: number;
}

/** One part of a message as the carrier knows it. */
export interface PartRecord {
  /** 0-based part index. */
  index: number;
  /** The carrier's id for this part, once submitted (the latest, if submitted twice). */
  carrierId: string | null;
  /** The part's outcome once its receipt came, else `null`. */
  outcome: Outcome | null;
}

/** The state of a message's delivery report, when it has a callback URL. */
export interface CallbackState {
  /** `pending` until a 2xx (`delivered`) or until given up on (`failed`). */
  state: 'pending' | 'delivered' | 'failed';
  /** Attempts made so far. */
  attempts: number;
  /** HTTP status of the last attempt, or `null` if none answered. */
  lastStatusCode: number | null;
  /** The last attempt's error text (network error, timeout, blocked address). */
  lastError: string | null;
  /** When the next attempt is due (epoch ms), while pending. */
  nextAttemptAt: number | null;
}

/** A stored message with its current state. */
export interface MessageRecord extends Omit<NewMessage, 'weight'> {
  /** Current lifecycle state. */
  state: MessageState;
  /** Reason of the terminal state, else `null`. */
  statusReason: StatusReason | null;
  /** Description of the terminal state, else `null`. */
  statusDescription: string | null;
  /** Submission attempts so far. */
  attempts: number;
  /** Last retryable submission error, for the status endpoint and logs. */
  lastError: string | null;
  /** Last change, epoch ms. */
  updatedAt: number;
  /** Parts, `smsCount` of them, in index order. */
  parts: PartRecord[];
  /** The delivery report's state, once one exists (the message is terminal and has a URL). */
  callback: CallbackState | null;
}

/**
 * A lease taken when work is stored: messages stored `queued`, or a delivery report stored
 * pending ({@link PartReceipt.reportLease}), leased to `owner` until `until`, exactly as if
 * `owner` had claimed them the moment they were stored. The instance that accepts a request
 * submits its messages itself this way, without a claim (a write and a scan per poll on SQL
 * storage) in between; should it stop, the lease ends and any instance claims them.
 */
export interface InsertLease {
  /** The lease owner (the accepting instance's worker). */
  owner: string;
  /** When the lease ends, epoch ms. */
  until: number;
}

/** The queued messages ({@link Storage.countQueued}). */
export interface QueueCount {
  /** Queued transactional messages. */
  transactional: number;
  /** Queued bulk messages. */
  bulk: number;
  /** When the oldest queued message was accepted (epoch ms), or `null` when none is. */
  oldestAcceptedAt: number | null;
}

/** Options of a claim: who claims, how many, for how long. */
export interface ClaimOptions {
  /** The claimer's id (one per worker instance). */
  owner: string;
  /** At most this many. */
  limit: number;
  /** How long the claim holds (ms) before another owner may take the work. */
  leaseMs: number;
  /** The current time, epoch ms (injected, so tests control time). */
  now: number;
}

/** What a state-changing call did. */
export interface Transition {
  /** The message after the call. */
  message: MessageRecord;
  /** Its state before the call. */
  previousState: MessageState;
  /**
   * The delivery report the call created leased, as its {@link PartReceipt.reportLease}
   * asked: present only then. The lease's owner sends that report without claiming it.
   */
  leasedReport?: LeasedReport;
}

/** A delivery report stored already leased (see {@link PartReceipt.reportLease}). */
export interface LeasedReport {
  /** The report's uid. */
  uid: string;
  /** When its lease ends, epoch ms: the lease's `until`. */
  until: number;
}

/** A carrier receipt for one part, as the delivery adapter reports it. */
export interface PartReceipt {
  /**
   * Every spelling the carrier id may be stored under, most likely first (see
   * `delivery/carrier-ids.ts`); the first one that names a stored part is used.
   */
  carrierIds: readonly string[];
  /** The part's outcome. */
  outcome: Outcome;
  /** When it arrived, epoch ms. */
  now: number;
  /**
   * When the receipt ends a message that has a callback URL, its report is stored leased
   * to `owner` until `until`, exactly as if `owner` had claimed it the moment it was
   * stored, and the transition names it ({@link Transition.leasedReport}). The instance
   * that applies a receipt sends the report itself this way, without a claim (a write and
   * a read of the message per report on SQL storage) in between; should it stop, the lease
   * ends and any instance claims the report. An adapter that cannot honour it leaves
   * `leasedReport` out, and the report is claimed as usual.
   */
  reportLease?: InsertLease;
}

/**
 * What applying a receipt did:
 * - `unknown`: no part has that carrier id (yet: the receipt may have overtaken the
 *   recording of the submission);
 * - `duplicate`: the part already had its outcome; nothing changed;
 * - `part`: the part got its outcome; the message is still waiting for others;
 * - `terminal`: the part got its outcome and the message reached its terminal state;
 * - `late`: the part got its outcome but the message was already terminal (for example
 *   `failed` by the worker); the message did not change.
 */
export type ReceiptResult =
  | { kind: 'unknown' }
  | { kind: 'duplicate'; ref: string }
  | { kind: 'part'; ref: string }
  | { kind: 'late'; ref: string }
  | { kind: 'terminal'; ref: string; transition: Transition };

/** What recording one part's submission did. */
export type SubmissionResult =
  | { kind: 'part'; ref: string }
  | { kind: 'submitted'; transition: Transition }
  | { kind: 'stale'; ref: string };

/** A delivery report due to be sent, with the message it reports on. */
export interface DueCallback {
  /** The report's id (`uid` in the payload, `webhook-id` header); stable across retries. */
  uid: string;
  /** Attempts made before this one. */
  attempts: number;
  /** The terminal message. */
  message: MessageRecord;
}

/** The result of one callback attempt, as the DLR sender records it. */
export interface CallbackAttempt {
  /** `delivered` ends it; `retry` schedules `nextAttemptAt`; `failed` gives up. */
  result: 'delivered' | 'retry' | 'failed';
  /** HTTP status, if the receiver answered. */
  statusCode: number | null;
  /** Error text, if it did not answer or was blocked. */
  error: string | null;
  /** When to try again, for `retry`. */
  nextAttemptAt: number | null;
  /** Now, epoch ms. */
  now: number;
}

/**
 * Where messages and their delivery reports live. Every method may be called
 * concurrently; an adapter serialises what it must.
 */
export interface Storage {
  /** Creates the schema if needed. Called once before first use; idempotent. */
  ready?(): Promise<void>;

  /** Releases what the adapter opened itself (not a pool or handle the host passed). */
  close?(): Promise<void>;

  /**
   * Stores all the messages of one request in state `queued`, or none (then throws). With
   * `lease`, they are stored leased to its owner until it ends: no claim returns them before
   * then. An adapter must honour it, or the messages would be submitted by their owner and
   * by whichever worker claims them (the contract suite checks it).
   *
   * With `idempotency`, the record is stored in the same atomic step as the messages. When
   * the principal's key is already taken by a live record (`expiresAt > idempotency.createdAt`),
   * nothing is stored and it throws; an expired one is replaced. Two calls with the same
   * principal and key at once store at most one of them, on every instance sharing the
   * storage (the other throws, after waiting for the first to commit or roll back if it must).
   * The caller tells the refusal from other failures by reading the key again
   * ({@link Storage.findIdempotency}), so any error will do. An adapter without
   * `findIdempotency` is never given a record.
   */
  insertMessages(messages: readonly NewMessage[], lease?: InsertLease, idempotency?: IdempotencyRecord): Promise<void>;

  /**
   * The principal's live record under `key` (`now < expiresAt`), exactly as stored, or
   * `null`. Optional, with {@link Storage.purgeIdempotency}: without it, the send endpoints
   * refuse the `Idempotency-Key` header (400), as they cannot keep its promise.
   */
  findIdempotency?(principalId: string, key: string, now: number): Promise<IdempotencyRecord | null>;

  /**
   * Deletes up to `limit` records expired at `now` (`expiresAt <= now`), oldest expiry
   * first; returns how many. An expired record is never found, so this only frees space.
   */
  purgeIdempotency?(now: number, limit: number): Promise<number>;

  /**
   * Leases up to `limit` messages that are `queued`, due (`nextAttemptAt <= now`) and not
   * leased by a live lease, in fair order. Their parts come with them, so parts already
   * submitted by an earlier attempt are not sent again.
   *
   * Fair order: every claimable `transactional` message before any `bulk` one; within a
   * class, the principals with claimable messages take turns, a principal of weight `w`
   * having `w` messages claimed in a turn; within a principal, messages in the order they
   * were accepted. So one principal's backlog of 100,000 never delays another's next
   * message by more than a turn. A message given back for a retry keeps its place, and is
   * claimed first once due. How an adapter keeps that order cheap is its own: the bundled
   * ones give each message a virtual finish tag when it is stored (`fairTags`, in
   * storage/fair-tags.ts) and claim by class and tag, with the acceptance order breaking
   * ties; that costs one indexed scan however many principals are queued.
   */
  claimMessages(options: ClaimOptions): Promise<MessageRecord[]>;

  /**
   * Counts the messages queued (accepted, not yet submitted nor ended), by class, and when
   * the oldest of them was accepted: all of them, or those of one principal. The router
   * calls it about once a second (backlog bounds, queue gauges), so it must stay cheap with
   * a large backlog: an index range, not a scan of the table. Optional: without it, the
   * backlog bounds and the queue gauges are off.
   */
  countQueued?(principalId?: string): Promise<QueueCount>;

  /**
   * Records that part `index` of message `ref` was accepted by the carrier under
   * `carrierId` (already normalised by the caller with `normalizeCarrierId`). When it was the last part, the message moves to `submitted`. Returns
   * `stale` if the message is no longer `queued` (already terminal). A part submitted twice
   * (a lease ran out while its owner still worked) keeps every carrier id it was given,
   * so a receipt for either one is matched.
   */
  recordSubmission(ref: string, index: number, carrierId: string, now: number): Promise<SubmissionResult>;

  /**
   * Gives a claimed message back after a retryable failure: it stays `queued`, its
   * attempt count goes up by one, its lease ends, and it is due again at `nextAttemptAt`.
   */
  reschedule(ref: string, nextAttemptAt: number, error: string, now: number): Promise<void>;

  /**
   * Ends a message that has not reached a terminal state (a permanent carrier error, or
   * retries exhausted). Returns `null` if it was already terminal: states only move forward.
   */
  finish(ref: string, outcome: Outcome, now: number): Promise<Transition | null>;

  /**
   * Ends up to `limit` messages that are still `submitted` and have not changed since
   * before `before` (no receipt came for some part), oldest first, with `outcome`, exactly as
   * {@link Storage.finish} would (their delivery reports are created in the same step).
   * Returns their transitions. A carrier that never sends a receipt must not leave a message,
   * and its caller's report, waiting forever.
   */
  expireOverdue(before: number, limit: number, outcome: Outcome, now: number): Promise<Transition[]>;

  /** Applies a carrier receipt to the part it names. */
  applyReceipt(receipt: PartReceipt): Promise<ReceiptResult>;

  /** One message of the principal's by its ref, or `null` (also when it is someone else's). */
  getMessage(principalId: string, ref: string): Promise<MessageRecord | null>;

  /** The principal's messages with this external id, newest first, at most `limit`. */
  findByExternalId(principalId: string, externalId: string, limit: number): Promise<MessageRecord[]>;

  /** Leases up to `limit` pending delivery reports that are due, oldest due first. */
  claimCallbacks(options: ClaimOptions): Promise<DueCallback[]>;

  /**
   * Hands claimed reports back without an attempt: each of `uids` that is still pending
   * becomes claimable again at `until` (its lease is cut short). For reports an instance
   * claimed but will not send soon (their receiver is busy), so they wait seconds, not a
   * whole lease.
   */
  deferCallbacks(uids: readonly string[], until: number): Promise<void>;

  /** Records an attempt of delivery report `uid` and ends its lease. */
  recordCallbackAttempt(uid: string, attempt: CallbackAttempt): Promise<void>;

  /**
   * Deletes up to `limit` terminal messages (with their parts and finished reports) last
   * changed before `before`; returns how many. Pending reports keep their message.
   */
  purge(before: number, limit: number): Promise<number>;
}

export type { IdempotencyRecord, MessageState, Outcome, StatusReason, TerminalState };

/**
 * The storage contract: where messages, their parts, their states and their pending
 * delivery reports live. Every adapter (memory, SQLite, PostgreSQL, or the host's own)
 * implements {@link Storage} and passes the contract suite (`runStorageContract`, from
 * `sms-outbox/testing`), whose failing cases name the rule they found broken. The router
 * decides (when to claim, retry, end, report, refund); the storage stores. The same on one
 * page: https://github.com/sms-outbox/sms-outbox/blob/main/docs/storage-contract.md
 *
 * Rules for every method:
 * - Every method may be called concurrently, from this instance and others sharing the
 *   database; each is one atomic step.
 * - Keys are case-sensitive: refs, principal ids, external ids and idempotency keys that
 *   differ only in case are different (a MySQL or MariaDB column needs a binary collation).
 * - Times are given (`now`, epoch ms), never read from the clock.
 * - `MessageRecord.updatedAt` is the `now` of the last call that changed the message.
 *
 * What the contract promises:
 * - `insertMessages` stores every message of a request or none of them, leased at once
 *   when a lease is given (the instance that accepted them submits them without a claim).
 * - A claimed message is leased to one owner until the lease ends; no other claimer gets
 *   it before then, and a crashed owner's messages are claimed again after it.
 * - States only move forward (`isTerminal`): once terminal, nothing changes a message's
 *   state, and a repeated receipt is reported as a duplicate.
 * - When a message becomes terminal and has a callback URL, its pending delivery report
 *   is stored in the same atomic step, so a crash cannot lose it; leased at once when a
 *   receipt carries a report lease (the instance that applied it sends it without a claim).
 * - Claims are fair (see {@link Storage.claimMessages}): transactional before bulk, principals
 *   with queued messages in turn by weight, each principal's messages in acceptance order.
 * - A request's idempotency record ({@link IdempotencyRecord}) is stored in the same atomic
 *   step as its messages, and one principal's key is taken by at most one request until it
 *   expires: two requests with the same key store the messages of one of them.
 *
 * What it does NOT promise: a strict order between messages (the turns are exact for one
 * writer and approximate when two instances accept for one principal at once), exactly-once
 * submission (a lease that ends while its owner still works lets another owner submit
 * again: delivery is at-least-once), or that lookups see another instance's write of the same ms.
 */
import type { MessageState, Outcome, StatusReason, TerminalState } from '../lifecycle/states.js';
import type { CallbackAttempt, CallbackState } from './callback-record.js';
import type { CallbackRecoveryStorage } from './callback-list.js';
export type { CallbackListFilter, CallbackListQuery, CallbackRecoveryStorage, OpenCallbackState, ReplaySelection } from './callback-list.js';
import type { ClaimOptions, InsertLease } from './claim-options.js';
import type { CreditCharge, CreditStorage } from './credit-record.js';
import type { CounterStorage, UnitCounter } from './counter-record.js';
import type { EraseStorage } from './erase-storage.js';
export type { ErasedMessages, ErasedPage, ErasedTransition, EraseStorage, IdempotencyCursor } from './erase-storage.js';
import type { IdempotencyRecord } from './idempotency-record.js';
import type { InboundStorage } from './inbound-record.js';
export type { DueInbound, InboundInsertOptions, InboundPart, InboundRecord, InboundWebhookPage, NewInbound, OptOutEntry, OptOutKey } from './inbound-record.js';
import type { MessageRecord, NewMessage, PartRecord } from './message-record.js';
import type { MessageListPage, MessageListQuery } from './message-list.js';
export type { ListPosition, MessageListFilter, MessageListPage, MessageListQuery } from './message-list.js';
import type { LoggedReport } from './report-log.js';
export type { LoggedReport } from './report-log.js';
export type { Encoding, Endpoint, MessageRecord, NewMessage, PartRecord, Priority, RecipientField, ReferenceField } from './message-record.js';

/** The queued messages ({@link Storage.countQueued}). */
export interface QueueCount {
  /** Queued transactional messages. */
  transactional: number;
  /** Queued bulk messages. */
  bulk: number;
  /** When the oldest queued message was accepted (epoch ms), or `null` when none is. */
  oldestAcceptedAt: number | null;
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
  /** The part it is on, for a message reported part by part (`reportPer: 'part'`); absent: on the message. */
  part?: number;
}

/** A carrier receipt for one part, as the delivery adapter reports it. */
export interface PartReceipt {
  /**
   * Every spelling the carrier id may be stored under, most likely first
   * (`carrierIdSpellings`); the first one that names a stored part is used.
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
 * - `part`: the part got its outcome; the message is still waiting for others (with one
 *   report per part, the part's report is born: `leasedReport` names it, with the message
 *   it reports on, when it was born leased under the receipt's `reportLease`);
 * - `terminal`: the part got its outcome and the message reached its terminal state;
 * - `late`: the part got its outcome (kept on the part: {@link PartRecord.outcome}) but the
 *   message was already terminal (for example `failed` by the worker); its state,
 *   `updatedAt` and report did not change. A repeat of it is then a `duplicate`.
 */
export type ReceiptResult =
  | { kind: 'unknown' }
  | { kind: 'duplicate'; ref: string }
  | { kind: 'part'; ref: string; leasedReport?: LeasedReport; message?: MessageRecord }
  | { kind: 'late'; ref: string }
  | { kind: 'terminal'; ref: string; transition: Transition };

/**
 * What {@link Storage.cancelMessages} did: the messages it ended `cancelled`, and those of the
 * principal's it could not (already submitted or ended, or leased to a worker about to
 * submit them), with their state. Refs that name no message of the principal are in neither.
 */
export interface CancelResult {
  /** The messages cancelled, as transitions (their reports are stored with them). */
  cancelled: Transition[];
  /** The messages not cancelled, with the state they are in. */
  notCancelled: { ref: string; state: MessageState }[];
}

/**
 * What recording one part's submission did: `part` (the message waits for other parts),
 * `submitted` (the last part: the message moved to `submitted`), or `stale` (the message is no
 * longer `queued`, or no such ref; the carrier id is stored all the same, see
 * {@link Storage.recordSubmission}).
 */
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
  /** The terminal message (or, with one report per part, the message whose part ended). */
  message: MessageRecord;
  /** The part the report is on, for a message reported part by part; absent: on the message. */
  part?: number;
}

/**
 * Where messages and their delivery reports live. Every method may be called concurrently;
 * an adapter serialises what it must. The inbound methods ({@link InboundStorage}: MO
 * messages, their webhooks, the opt-out list) and report recovery's are optional, all or none.
 */
export interface Storage extends Partial<InboundStorage>, Partial<CallbackRecoveryStorage>, CreditStorage, CounterStorage, EraseStorage {
  /**
   * Creates the schema if needed; idempotent. The router calls it through one memoised
   * promise and awaits it before any other call reaches the storage (requests, the worker,
   * the sweeps, and the host's calls through `router.credit` and `router.optOuts`); after a
   * failure it is called again on the next use.
   */
  ready?(): Promise<void>;

  /** Releases what the adapter opened itself (not a pool or handle the host passed). */
  close?(): Promise<void>;

  /**
   * Stores all the messages of one request in state `queued` (`scheduled`, out of the claim
   * order, for those whose `sendAt` is later than `createdAt`), or none (then throws). With
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
   * `findIdempotency` is never given a record. With `credit` (only given to an adapter with
   * the ledger, {@link CreditStorage}), its units are checked and taken in the same step, or
   * nothing is stored and it throws `InsufficientCreditError`; two requests never overspend a
   * balance (a read of the balance and a later write of it is not one step). With
   * `counters` (only given to an adapter with `countedUnits`, {@link CounterStorage}), each
   * is added to in the same step, or, when one would pass its limit, nothing is stored and it
   * throws `CounterLimitError`; it then resolves with the counters' new values, in order.
   *
   * Each message is stored with `updatedAt` and its first due time equal to its `createdAt`,
   * and every part still to submit; a `ref` already stored, or twice in the batch, makes the
   * whole batch throw.
   */
  insertMessages(
    messages: readonly NewMessage[],
    lease?: InsertLease,
    idempotency?: IdempotencyRecord,
    credit?: CreditCharge,
    counters?: readonly UnitCounter[],
  ): Promise<void | readonly number[]>;

  /**
   * The principal's live record under `key` (`now < expiresAt`), exactly as stored, or
   * `null`. Optional, with {@link Storage.purgeIdempotency}: without it, the send endpoints
   * refuse the `Idempotency-Key` header (400), as they cannot keep its promise. May answer
   * without a promise (the memory and SQLite storages do): the lookup is on every keyed
   * request's path.
   */
  findIdempotency?(principalId: string, key: string, now: number): Promise<IdempotencyRecord | null> | IdempotencyRecord | null;

  /**
   * Deletes up to `limit` records expired at `now` (`expiresAt <= now`), oldest expiry
   * first; returns how many. An expired record is never found, so this only frees space.
   */
  purgeIdempotency?(now: number, limit: number): Promise<number>;

  /**
   * Redacts the texts of up to `limit` ended messages whose `retainText` is `days:N` and whose
   * time (`createdAt` + N days) has come by `now`, earliest first: each record's `text`
   * becomes `[redacted]` and its `textSha256` the SHA-256 (hex) of the text it had; its
   * parts, counts and state stay, and its `updatedAt` too (a redaction is no change of the
   * message). A message whose report is still pending waits for the report. Returns how many
   * were redacted. Optional: without it, `days:N` texts are kept until the message is purged
   * (`until-final` is applied in the step that ends a message, by the storage's `finish`,
   * `applyReceipt` and the sweeps; see docs/retain-text.md).
   */
  redactTexts?(now: number, limit: number): Promise<number>;

  /**
   * Leases to `owner` until `now + leaseMs` up to `limit` messages that are `queued`, due
   * (`nextAttemptAt <= now`; a new message is first due at its `createdAt`), not under a
   * live lease and not past their `validUntil`, and returns them in fair order. Their parts
   * come with them, so parts already submitted by an earlier attempt are not sent again. It
   * takes `min(limit, claimable)`: a claim that comes back short while messages are free
   * (another claim holds locks) is a fault, and two claims at once get disjoint sets.
   *
   * Fair order, as properties (the suite checks each claim against them; any order that
   * keeps them passes):
   * 1. every claimable `transactional` message before any `bulk` one;
   * 2. within a principal and class, acceptance order; a message given back for a retry
   *    keeps its place, so once due it goes before its principal's later ones;
   * 3. turns: while a principal B has a claimable message and is not served, a principal A
   *    of the class is served at most once for equal weights, else `ceil(wA / wB) + 1` times;
   *    an idle principal gains no credit for its idleness;
   * 4. weights within a bound: two principals with claimable messages never drift more than
   *    2 turns (messages served / weight) apart.
   * So one principal's backlog of 100,000 never delays another's next message by more than
   * a turn. How an adapter keeps that order cheap is its own: the bundled ones give each
   * message a virtual finish tag when it is stored (`fairTags`, exported) and claim by
   * (`PRIORITY_RANK`, tag, insertion order), one indexed scan however many principals are
   * queued; a weighted round robin over principals is fair too.
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
   * `carrierId` (already normalised by the caller with `normalizeCarrierId`). When it was the
   * last part, the message moves to `submitted` and its lease ends. Returns `stale` if the
   * message is no longer `queued` (it ended while the part was at the carrier) or the ref is
   * unknown; the carrier id is stored on the part all the same, so the receipt that comes
   * later is `late`, not `unknown` (an unknown receipt is refused to the carrier, which
   * sends it again and again). A part submitted twice (a lease ran out while its owner
   * still worked) keeps every carrier id it was given, so a receipt for either one is
   * matched; the record shows the latest.
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

  /**
   * Queues the `scheduled` messages due at `now` (`sendAt <= now`), up to `limit`, earliest
   * first: each gets its fair place then, as if accepted at `now` (with the `weight` it was
   * stored with), and is claimable at once.
   * One whose `validUntil` has passed ends `VALIDITY_ELAPSED` instead. Returns their transitions;
   * two instances never move one message twice. Optional, with the next two: without them,
   * requests with `send_at`, `validity_period` or a cancel are refused.
   */
  promoteScheduled?(now: number, limit: number): Promise<Transition[]>;

  /**
   * Ends up to `limit` `queued` messages whose `validUntil` has passed at `now` and that no
   * live lease holds (`leaseUntil > now`; no grace, unlike a cancel), as
   * {@link Storage.finish} would with `VALIDITY_ELAPSED`.
   */
  expireUnsent?(now: number, limit: number): Promise<Transition[]>;

  /**
   * Ends `CANCELLED` each of the principal's `refs` that is `scheduled`, or `queued` with no
   * part submitted and no lease barring it: a lease bars a cancel while it is live and for
   * `CANCEL_LEASE_GRACE_MS` after it ends (`leaseBarsCancel`, exported), as the carrier may still
   * be answering a submit its owner started. One atomic step per message: a message is
   * cancelled or submitted, never both.
   */
  cancelMessages?(principalId: string, refs: readonly string[], now: number): Promise<CancelResult>;

  /**
   * Applies a carrier receipt to the part it names, in one atomic step (see
   * {@link ReceiptResult}): the part's outcome, and when every part has one, the message's
   * terminal state (delivered only if every part is, else the first part by index that was
   * not: `foldParts`) with its report.
   */
  applyReceipt(receipt: PartReceipt): Promise<ReceiptResult>;

  /** One message of the principal's by its ref, or `null` (also when it is someone else's). */
  getMessage(principalId: string, ref: string): Promise<MessageRecord | null>;

  /** The principal's messages with this external id, newest first (`createdAt`, then insertion), at most `limit`. */
  findByExternalId(principalId: string, externalId: string, limit: number): Promise<MessageRecord[]>;

  /**
   * One page of the principal's messages that match every filter of `query`, newest first
   * (`createdAt`, then insertion order), strictly after `query.after` (the `next` of the page
   * before), at most `query.limit`; `next` is `null` when no matching message follows. A
   * message stored while a client pages is on no later page (it is newer than the first),
   * and none moves between pages. Served by an index: a page costs about its own size
   * however many messages are stored. Optional: without it, `GET {base}/messages` is not
   * served.
   */
  listMessages?(query: MessageListQuery): Promise<MessageListPage>;

  /**
   * The principal's delivery reports made after the one of key `after` (from the first when
   * `null`), in the order they were made, at most `limit`: one per message that ended, with a
   * callback URL or without, made in the same atomic step as the message's end, and kept as
   * long as the message (retention deletes both). A client that
   * keeps the last key it read and asks again gets every report once, across restarts and
   * instances. Optional: without it, `GET {base}/reports` is not served.
   */
  readReports?(principalId: string, after: number | null, limit: number): Promise<LoggedReport[]>;

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

export type { TimedFields } from './timed.js';
export type { CallbackAttempt, CallbackState, ClaimOptions, CounterStorage, CreditCharge, CreditStorage, UnitCounter, InsertLease, InboundStorage, IdempotencyRecord, MessageState, Outcome, StatusReason, TerminalState };

/**
 * The record-store contract: the few primitives a storage must offer when the library makes
 * every decision. A `RecordStore` keeps message rows, claims the lowest-keyed due rows
 * under a lease, finds rows by the keys the library gives it, and writes a row only if it is
 * still at the version the library read (compare-and-set), each atomically. It holds no
 * business rule: which state follows which, the fair order, credit refunds, validity and
 * cancel are decided by the library (the ledger, `createLedger`), which implements the full
 * `Storage` on top of any record store. Pass a record store as `storage` to
 * `createSmsRouter` and the router wraps it.
 *
 * Every method may be called concurrently, by this instance and by others sharing the
 * database. Keys are case-sensitive. Times are given (`now`, epoch ms), never read from the
 * clock. Rows and records handed to a store or returned by it belong to the caller: a store
 * copies what it keeps (or never changes it, and the caller never changes what it got).
 *
 * @module
 */
import type { ClaimOptions } from './claim-options.js';
import type { IdempotencyRecord } from './idempotency-record.js';
import type { MessageRecord } from './message-record.js';
import type { MessageListQuery } from './message-list.js';
import type { CallbackListQuery } from './callback-list.js';
import type { QueueCount } from './contract.js';
import type { UnitCounter } from './counter-record.js';
import type { IdempotencyCursor } from './erase-storage.js';
import type { InboundStore } from './inbound-store.js';

/**
 * The sweeps a row may wait for, each at its `timerAt`: the library sets at most one per
 * row and finds the rows whose time has come with {@link RecordStore.dueMessages}.
 * - `scheduled`: a scheduled message, at its `sendAt`;
 * - `validity`: a queued message with a validity period, at its `validUntil`;
 * - `receipt`: a submitted message waiting for its receipts, at its `updatedAt`;
 * - `purge`: an ended message with no pending delivery report, at its `updatedAt`;
 * - `redact`: an ended message with no pending delivery report whose text is to be redacted
 *   later (its `retainText` is `days:N`), at that time; then `purge`.
 */
export type Timer = 'scheduled' | 'validity' | 'receipt' | 'purge' | 'redact';

/**
 * What the library keeps on a row beside the message record, for its own rules. A store
 * keeps it as it is given (as JSON, for example) and reads nothing in it.
 */
export interface RowBook {
  /** The principal's weight when the message was accepted (its fair place when a scheduled message comes due). */
  weight: number;
  /** The SMS units its request's charge took for it, and its refund policy; `null` when not charged. */
  charge: { units: number; refunds: 'unsent' | 'unsent-and-failed' } | null;
  /** Carrier ids a part had before it was submitted again, with the part's index. */
  replacedCarrierIds: { carrierId: string; index: number }[];
  /** The delivery report's uid, once the message has one. */
  reportUid: string | null;
  /** With one report per part: the part the report `reportUid` is on. Absent: the report is on the message. */
  reportPart?: number;
  /** With one report per part: the parts whose reports wait for that one to finish, in the order they ended. Absent: none. */
  partReports?: number[];
}

/**
 * A message as a record store keeps it: the record, the library's bookkeeping, and the
 * fields the library computed for the store to index and compare. The store reads
 * `record.ref` (the row's key, unique), `record.principalId`, `record.externalId`,
 * `record.createdAt`, `record.sendAt` and `record.validUntil` (the last two `null` or
 * absent when unset), and the fields below; it keeps the rest as given.
 */
export interface MessageRow {
  /** The message as the router sees it. */
  record: MessageRecord;
  /** The library's bookkeeping, kept as given. */
  book: RowBook;
  /**
   * Counts the row's writes: 0 when inserted; every write ({@link RecordStore.writeMessages},
   * a claim) stores the row with its version one higher, and a write that names a version
   * other than the stored one changes nothing.
   */
  version: number;
  /** Insertion order, set by the store when it inserts the row (any value given, in an insert or a write, is ignored); the last tie-break of every order. */
  seq: number;
  /**
   * The submit queue's class rank (0 claimed before 1) while the message may be claimed,
   * `null` when it is not in the submit queue.
   */
  queue: number | null;
  /**
   * The row's place within its class: claims take the smallest `orderKey` first, then the
   * smallest `seq`. Out of the submit queue, with a pending report, the report's place among
   * those due at the same `reportDueAt` (its own due time, kept when a lease moves
   * `reportDueAt`): {@link RecordStore.claimReports} takes the smaller first. A finite
   * float, fractional and possibly negative: compare it as a number.
   */
  orderKey: number;
  /** When the row may next be claimed, epoch ms (with `queue` not `null`). */
  dueAt: number;
  /** The claimer holding the row, while `leaseUntil` is in the future. */
  leaseOwner: string | null;
  /** When the lease on the row ends, epoch ms; `null` when it was never leased or the lease was ended. */
  leaseUntil: number | null;
  /** When the row's pending delivery report may next be claimed, epoch ms; `null` when it has none pending. */
  reportDueAt: number | null;
  /** The sweep the row waits for, if any. */
  timer: Timer | null;
  /** When `timer` comes due, epoch ms. */
  timerAt: number | null;
  /**
   * Every carrier id the row's parts were ever given (also those replaced by a second
   * submission): {@link RecordStore.findByCarrierId} finds the row by any of them. A
   * carrier may reuse an id for a later message: the row given it last is the one found.
   */
  carrierIds: readonly string[];
}

/** A compare-and-set write of one row ({@link RecordStore.writeMessages}). */
export interface MessageWrite {
  /** The row as it is to be stored; its `version` is the read one plus one. */
  row: MessageRow;
  /** The version the library read: the write happens only if the stored row still has it. */
  expectedVersion: number;
  /** Units to give back to the row's principal's credit balance in the same atomic step (a refund). */
  refund?: number;
  /**
   * The ids of `row.carrierIds` that the stored row at `expectedVersion` does not have: the
   * ones the write adds. A store may rely on it and index only these (the others are
   * indexed already, since the stored row has them); when absent, any of `row.carrierIds`
   * may be new. The ledger always gives it (empty when the write adds none).
   */
  addedCarrierIds?: readonly string[];
  /**
   * The row as the library read it at `expectedVersion` (so the stored row, if the write
   * applies): a store may compare with it and write only the fields that changed. Absent:
   * any field may have.
   */
  previous?: MessageRow;
  /**
   * The write ends the message, which makes its delivery report (given only to a store with
   * {@link RecordStore.readReports}): when the write applies, the store gives the row its
   * report key in the same atomic step, greater than every key committed before it.
   */
  reported?: true;
}

/** An ended message as a record store hands it back for the report log: its row and its report key. */
export interface ReportedRow {
  /**
   * The key the store gave the message in the write that ended it: greater than every key
   * committed before it, so a reader that saw key `k` has seen every key below `k` that will
   * ever exist (a safe integer).
   */
  seq: number;
  /** The message's row as it is now. */
  row: MessageRow;
}

/**
 * A counter an insert adds to ({@link InsertGuard.counters}): the one of `principalId` and
 * `period` (created at 0), which must not pass `limit`. The store reads nothing in `period`:
 * which periods there are, and when one ends, is the library's.
 */
export type CounterGuard = UnitCounter;

/** What must be true for a batch of messages to be stored ({@link RecordStore.insertMessages}). */
export interface InsertGuard {
  /** Stored with the messages, unless the principal's key is taken by a live record (`expiresAt > createdAt`): then nothing is stored. */
  idempotency?: IdempotencyRecord;
  /** Taken from the principal's balance in the same step, unless the balance is smaller: then nothing is stored. */
  credit?: { principalId: string; units: number };
  /**
   * Each added to its counter in the same step, unless one of them would then pass its
   * limit: then nothing is stored and no counter changes. Only for a store with
   * {@link RecordStore.countedUnits}.
   */
  counters?: readonly CounterGuard[];
}

/**
 * Why a guarded insert stored nothing: `key-taken` (the idempotency key is live),
 * `insufficient-credit` (with the balance the store saw, if it knows it), or `limit-reached`
 * (`counter`, the index in the guard's `counters` of a counter the insert would have taken
 * past its limit).
 */
export type InsertRefusal =
  | { refused: 'key-taken' }
  | { refused: 'insufficient-credit'; balance?: number }
  | { refused: 'limit-reached'; counter: number };

/** What a stored insert whose guard had `counters` answers: each counter's value after it, in the guard's order. */
export interface InsertCounted {
  /** Never set: it tells this answer from an {@link InsertRefusal}. */
  refused?: undefined;
  /** The counters' values with the insert's units added. */
  counted: readonly number[];
}

/**
 * A storage that only stores: the primitives the library's rules run on. Every method is one
 * atomic step. See the module's TSDoc for the rules every method keeps.
 */
export interface RecordStore {
  /** Creates the schema if needed; idempotent. Awaited before any other call. */
  ready?(): Promise<void>;
  /** Releases what the store opened itself (not a pool or handle the host passed). */
  close?(): Promise<void>;
  /** Inbound (MO) messages and opt-outs, optional: without them MO messages are only announced. */
  readonly inbound?: InboundStore;

  /**
   * Stores every row, or none: a `ref` already stored or repeated makes the whole batch
   * throw. With a guard, its idempotency record is put and its credit taken in the same
   * step, and its counters added to; when one of them cannot be, nothing is stored and the
   * refusal is returned (not thrown). Stored with counters, it answers their new values.
   * Each row is stored at version 0 with a new, increasing `seq`.
   */
  insertMessages(rows: readonly MessageRow[], guard?: InsertGuard): Promise<InsertRefusal | InsertCounted | undefined>;

  /** The row of `ref`, or `null`. */
  getMessage(ref: string): Promise<MessageRow | null>;

  /** The principal's rows with this external id, newest first (`record.createdAt` descending, then `seq` descending), at most `limit`. */
  findByExternalId(principalId: string, externalId: string, limit: number): Promise<MessageRow[]>;

  /**
   * The row one of whose `carrierIds` equals the first of `carrierIds` that any row has, or
   * `null`. When several rows have that id (a carrier reused it), the one given it last
   * (inserted or written with it most recently); writing or deleting another row that has
   * it does not change that.
   */
  findByCarrierId(carrierIds: readonly string[]): Promise<MessageRow | null>;

  /**
   * Leases to `owner` until `now + leaseMs` up to `limit` rows that are in the submit queue
   * (`queue` not `null`), due (`dueAt <= now`), not leased (`leaseUntil` `null` or
   * `<= now`) and still valid (`record.validUntil` `null` or `> now`), taken in the order
   * (`queue`, `orderKey`, `seq`); returns them as stored after the claim (`leaseOwner`,
   * `leaseUntil` set, `version` one higher). Takes `min(limit, claimable)`; two claims at
   * once get disjoint sets.
   */
  claimMessages(options: ClaimOptions): Promise<MessageRow[]>;

  /**
   * Leases up to `limit` rows whose delivery report is due (`reportDueAt <= now`), earliest
   * `reportDueAt` first (then `orderKey`, then `seq`), by moving their `reportDueAt` to
   * `now + leaseMs` (that is the report's lease: `owner` need not be stored); returns them
   * as stored after the claim (`version` one higher). Two claims at once get disjoint sets.
   */
  claimReports(options: ClaimOptions): Promise<MessageRow[]>;

  /** Up to `limit` rows waiting for `timer` with `timerAt <= at`, earliest `timerAt` first (then `seq`). */
  dueMessages(timer: Timer, at: number, limit: number): Promise<MessageRow[]>;

  /**
   * The greatest `orderKey` among the principal's rows in submit queue `queue`, and the
   * class's head: the smallest `orderKey` a claim at `now` could take in that queue (due,
   * unleased, valid), or when none could, the greatest `orderKey` in it; each `null` when
   * there is no such row. The library places new messages with them.
   */
  queueEnds(queue: number, principalId: string, now: number): Promise<{ principalLast: number | null; head: number | null }>;

  /**
   * Counts the rows in the submit queue by `queue` (0: transactional, 1: bulk) and the
   * smallest `record.sendAt ?? record.createdAt` among them: all of them, or one
   * principal's. Must stay cheap with a large backlog (called about once a second).
   */
  countQueued?(principalId?: string): Promise<QueueCount>;

  /**
   * The rows of `query.principalId` that match every filter of `query`, newest first
   * (`record.createdAt` descending, then `seq` descending), strictly after `query.after`
   * when given (smaller `createdAt`, or equal and smaller `seq`), at most `query.limit`.
   * Must be served by an index (a page over a million rows reads about a page of them, not
   * the table), and see every row stored or written before it was called. Optional: without
   * it, the list endpoint is not served.
   */
  listMessages?(query: MessageListQuery): Promise<MessageRow[]>;

  /**
   * The rows of `query.principalId` whose report (`record.callback`) is in one of the states
   * `query` asks for (pending and failed when it names none) and that match its times, in
   * the order and from the start {@link RecordStore.listMessages} keeps, at most
   * `query.limit`. Served by an index on the report's state. Optional: without it, report
   * recovery (`GET {base}/callbacks` and the replay) is not served.
   */
  listCallbacks?(query: CallbackListQuery): Promise<MessageRow[]>;

  /**
   * The principal's rows that have a report key greater than `after` (every one when
   * `null`), in key order, at most `limit`, each with its key. A key is never read before the
   * write that gave it is committed, nor after a later one is: a reader that saw a key has
   * seen every smaller key it will ever see. Served by an index. Optional, with
   * {@link MessageWrite.reported}: without it, `GET {base}/reports` is not served.
   */
  readReports?(principalId: string, after: number | null, limit: number): Promise<ReportedRow[]>;

  /**
   * Up to `limit` rows whose `record.recipient` is `recipient`, of every principal, ordered by
   * principal id (in the store's own order of them) from `fromPrincipal` on (that one
   * included; `null`: the first). Served by an index (the list's by principal and
   * recipient will do, walked principal by principal). Optional, with the pair below:
   * the erase steps of `sms.erase` (docs/erase.md).
   */
  findByRecipient?(recipient: string, fromPrincipal: string | null, limit: number): Promise<MessageRow[]>;

  /** Up to `limit` idempotency records, live or not, ordered by principal then key (the store's order) after `after` (`null`: the first). */
  scanIdempotency?(after: IdempotencyCursor | null, limit: number): Promise<IdempotencyRecord[]>;

  /** Replaces the `body` of each of `records` still held under its principal and key with the same `createdAt`; returns how many. */
  rewriteIdempotency?(records: readonly IdempotencyRecord[]): Promise<number>;

  /**
   * Applies each write whose row is still at `expectedVersion`, each in one atomic step
   * with its refund (and with the carrier ids the new row adds to its `carrierIds`, which
   * the lookup by carrier id must find from then on: `addedCarrierIds` when given, see
   * {@link MessageWrite}). Returns, per write in order, whether it was applied.
   */
  writeMessages(writes: readonly MessageWrite[]): Promise<boolean[]>;

  /** Deletes the rows of `refs` with everything kept for them (their carrier ids); returns how many were deleted. */
  deleteMessages(refs: readonly string[]): Promise<number>;

  /** The principal's idempotency record under `key` if it is live at `now` (`expiresAt > now`), else `null`. */
  findIdempotency(principalId: string, key: string, now: number): Promise<IdempotencyRecord | null> | IdempotencyRecord | null;

  /** Deletes up to `limit` idempotency records expired at `now`, oldest expiry first; returns how many. */
  purgeIdempotency(now: number, limit: number): Promise<number>;

  /** Adds `units` to the principal's balance (created at 0); returns the new balance. */
  addCredit(principalId: string, units: number): Promise<number>;

  /** The principal's balance, 0 when it has none. */
  creditBalance(principalId: string): Promise<number>;

  /**
   * The value of the principal's counter `period` ({@link InsertGuard.counters}), 0 when it
   * has none. Optional: a store with it keeps counters, one without is never given them.
   */
  countedUnits?(principalId: string, period: string): Promise<number>;

  /** Deletes up to `limit` counters whose period is none of `live`; returns how many. Optional, with `countedUnits`. */
  purgeCounters?(live: readonly string[], limit: number): Promise<number>;
}

/** Whether `storage` is a {@link RecordStore} (it has `writeMessages`) rather than a full `Storage`. */
export function isRecordStore(storage: object): storage is RecordStore {
  return typeof (storage as Partial<RecordStore>).writeMessages === 'function';
}

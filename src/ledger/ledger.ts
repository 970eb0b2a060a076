/**
 * The ledger: the full `Storage` contract on top of any `RecordStore`, holding every rule
 * on a message once (which state follows which, the fair order, leases, credit refunds,
 * validity and cancel, delivery reports, timers). The store only stores; the rules are in
 * the files of this folder, each deciding a row's next version for the compare-and-set loop
 * (compare-and-set.ts).
 *
 * @module
 */
import { InsufficientCreditError } from '../lifecycle/credit.js';
import { CounterLimitError } from '../lifecycle/counter-limit.js';
import type { UnitCounter } from '../storage/counter-record.js';
import { isScheduled } from './queued-record.js';
import type { InboundStorage } from '../storage/inbound-record.js';
import type {
  CallbackAttempt,
  CancelResult,
  ClaimOptions,
  CreditCharge,
  DueCallback,
  IdempotencyRecord,
  InsertLease,
  LoggedReport,
  MessageListPage,
  MessageListQuery,
  MessageRecord,
  NewMessage,
  Outcome,
  PartReceipt,
  QueueCount,
  ReceiptResult,
  Storage,
  SubmissionResult,
  Transition,
} from '../storage/contract.js';
import type { InsertGuard, MessageRow, RecordStore } from '../storage/record-store.js';
import type { CallbackListQuery, ReplaySelection } from '../storage/callback-list.js';
import { RowWriter, type Decision } from './compare-and-set.js';
import { copyRecord, recordFields } from './copy-record.js';
import { fairPlaces, RecentTags, type Joining, type Placed } from './fair-place.js';
import { KnownRows } from './known-rows.js';
import { listPage } from './list.js';
import { CallbackRecovery } from './replay.js';
import { receiptRule, submissionRule } from './receipts.js';
import { reportOf } from './report-log.js';
import { Reports } from './reports.js';
import { endRow, hasEnded, newRow, nextRow, rankOf, weightOf } from './rows.js';
import { Sweeps } from './sweeps.js';
import { eraseSteps } from './erase.js';
import { inboundSteps } from './inbound-steps.js';
import type { EraseStorage } from '../storage/erase-storage.js';

/** The full storage contract over `store`: see {@link createLedger}. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class Ledger implements Storage {
  readonly #store: RecordStore;
  readonly #known = new KnownRows();
  /** The last fair tag given here to each principal and class (fair-place.ts). */
  readonly #recentTags = new RecentTags();
  readonly #writer: RowWriter;
  readonly #reports: Reports;
  readonly #sweeps: Sweeps;

  constructor(store: RecordStore) {
    this.#store = store;
    this.#writer = new RowWriter(store, this.#known, store.readReports !== undefined);
    this.#reports = new Reports(store, this.#writer);
    this.#sweeps = new Sweeps(store, this.#writer, this.#recentTags);
    // Optional on a store, so offered only when it has them: the router turns a feature off
    // for a storage without its methods.
    if (store.ready !== undefined) this.ready = store.ready.bind(store);
    if (store.close !== undefined) this.close = store.close.bind(store);
    if (store.countQueued !== undefined) this.countQueued = store.countQueued.bind(store);
    if (store.countedUnits !== undefined) this.countedUnits = store.countedUnits.bind(store);
    if (store.purgeCounters !== undefined) this.purgeCounters = store.purgeCounters.bind(store);
    if (store.readReports !== undefined) {
      const readRows = store.readReports.bind(store);
      this.readReports = async (principalId, after, limit) => (await readRows(principalId, after, limit)).map(reportOf);
    }
    if (store.listMessages !== undefined) {
      const listRows = store.listMessages.bind(store);
      this.listMessages = (query) => listPage(listRows, query);
    }
    if (store.listCallbacks !== undefined) {
      const recovery = new CallbackRecovery(store as RecordStore & Required<Pick<RecordStore, 'listCallbacks'>>, this.#writer);
      this.listCallbacks = (query) => recovery.list(query);
      this.replayCallbacks = (selection, now) => recovery.replay(selection, now);
    }
    if (store.inbound !== undefined) Object.assign(this, inboundSteps(store.inbound));
    Object.assign(this, eraseSteps(store, this.#writer));
  }

  /**
   * Stores every message of one request (with its idempotency record, its charge and its
   * counters), each placed in the fair order of its class, or none: throws when the key is
   * taken, the balance is short ({@link InsufficientCreditError}) or a counter would pass its
   * limit ({@link CounterLimitError}). With counters, resolves with their new values.
   */
  async insertMessages(
    messages: readonly NewMessage[],
    lease?: InsertLease,
    idempotency?: IdempotencyRecord,
    credit?: CreditCharge,
    counters?: readonly UnitCounter[],
  ): Promise<void | readonly number[]> {
    const { keys: orderKeys, release } = await this.#orderKeys(messages);
    const rows = messages.map((message, i) => newRow(message, orderKeys[i]!, lease, credit));
    let guard: InsertGuard | undefined;
    const counting = counters !== undefined && counters.length > 0;
    if (counting && this.#store.countedUnits === undefined) throw new Error('ledger: the record store keeps no counters (it has no countedUnits)');
    if (idempotency !== undefined || credit !== undefined || counting) {
      guard = {};
      if (idempotency !== undefined) guard.idempotency = idempotency;
      if (credit !== undefined) guard.credit = { principalId: credit.principalId, units: credit.units };
      if (counting) guard.counters = counters;
    }
    let refusal;
    try {
      refusal = await this.#store.insertMessages(rows, guard);
    } finally {
      release();
    }
    if (refusal?.refused !== undefined) {
      if (refusal.refused === 'insufficient-credit') throw new InsufficientCreditError(credit?.units ?? 0, refusal.balance);
      if (refusal.refused === 'limit-reached') throw new CounterLimitError(refusal.counter);
      throw new Error(`ledger: idempotency key ${JSON.stringify(idempotency?.key)} is taken`);
    }
    if (lease !== undefined) for (const row of rows) this.#known.remember(row);
    return refusal?.counted;
  }

  /** The order key of each of `messages` (0 for a scheduled one: it is placed when it comes due), held in flight until released. */
  async #orderKeys(messages: readonly NewMessage[]): Promise<Placed> {
    const joining: Joining[] = [];
    const joiningAt: number[] = [];
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i]!;
      if (isScheduled(message)) continue;
      joining.push({ principalId: message.principalId, rank: rankOf(message.priority), weight: weightOf(message.weight) });
      joiningAt.push(i);
    }
    if (joining.length === 0) return { keys: messages.map(() => 0), release: () => undefined };
    const placed = await fairPlaces(this.#store, this.#recentTags, joining, messages[0]!.createdAt);
    if (joining.length === messages.length) return placed;
    const orderKeys = messages.map(() => 0);
    for (let i = 0; i < joiningAt.length; i++) orderKeys[joiningAt[i]!] = placed.keys[i]!;
    return { keys: orderKeys, release: placed.release };
  }

  /** The principal's live idempotency record under `key`, or `null`. */
  findIdempotency(principalId: string, key: string, now: number): Promise<IdempotencyRecord | null> | IdempotencyRecord | null {
    return this.#store.findIdempotency(principalId, key, now);
  }

  /** Deletes up to `limit` idempotency records expired at `now`, oldest expiry first. */
  purgeIdempotency(now: number, limit: number): Promise<number> {
    return this.#store.purgeIdempotency(now, limit);
  }

  /**
   * Adds `units` to the principal's balance; resolves with the new balance. Takes the
   * contract's `now` so that callers of every storage call it alike; a record store's
   * balance keeps no time.
   */
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  topUpCredit(principalId: string, units: number, now?: number): Promise<number> {
    return this.#store.addCredit(principalId, units);
  }

  /** The principal's balance, 0 when never topped up. */
  creditBalance(principalId: string): Promise<number> {
    return this.#store.creditBalance(principalId);
  }

  /** Leases up to `limit` claimable queued messages in fair order (the store's order keys). */
  async claimMessages(options: ClaimOptions): Promise<MessageRecord[]> {
    const rows = await this.#store.claimMessages(options);
    const records = new Array<MessageRecord>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      this.#known.remember(rows[i]!);
      records[i] = copyRecord(rows[i]!.record);
    }
    return records;
  }

  /** Records a part's carrier id; moves the message to `submitted` with its last part. */
  recordSubmission(ref: string, index: number, carrierId: string, now: number): Promise<SubmissionResult> {
    return this.#writer.update(ref, submissionRule(ref, index, carrierId, now));
  }

  /** Gives a queued message back for another attempt at `nextAttemptAt`, keeping its place. */
  async reschedule(ref: string, nextAttemptAt: number, error: string, now: number): Promise<void> {
    await this.#writer.update(ref, (row): Decision<void> => {
      if (row === null || row.record.state !== 'queued') return { result: undefined };
      const record = recordFields(row.record);
      record.attempts += 1;
      record.lastError = error;
      record.updatedAt = now;
      return { result: undefined, row: nextRow(row, { record, dueAt: nextAttemptAt, leaseOwner: null, leaseUntil: null }) };
    });
  }

  /** Ends a message not yet ended; `null` if it already is, or is unknown. */
  finish(ref: string, outcome: Outcome, now: number): Promise<Transition | null> {
    return this.#writer.update(ref, (row): Decision<Transition | null> => {
      if (row === null || hasEnded(row)) return { result: null };
      const ending = endRow(row, outcome, now);
      return { result: ending.transition, row: ending.row, refund: ending.refund };
    });
  }

  /** Ends submitted messages unchanged since before `before`, oldest first. */
  expireOverdue(before: number, limit: number, outcome: Outcome, now: number): Promise<Transition[]> {
    return this.#sweeps.expireOverdue(before, limit, outcome, now);
  }

  /** Queues the scheduled messages due at `now`, or ends those whose validity ended. */
  promoteScheduled(now: number, limit: number): Promise<Transition[]> {
    return this.#sweeps.promoteScheduled(now, limit);
  }

  /** Ends the queued messages whose validity ended by `now` and that no live lease holds. */
  expireUnsent(now: number, limit: number): Promise<Transition[]> {
    return this.#sweeps.expireUnsent(now, limit);
  }

  /** Cancels each of the principal's `refs` still scheduled, or queued unsent and not barred by a lease. */
  cancelMessages(principalId: string, refs: readonly string[], now: number): Promise<CancelResult> {
    return this.#sweeps.cancelMessages(principalId, refs, now);
  }

  /** Applies a receipt to the part the first of its carrier-id spellings names. */
  async applyReceipt(receipt: PartReceipt): Promise<ReceiptResult> {
    const rule = receiptRule(receipt);
    // The row of the last decision is the one written when the receipt ended the message.
    let written: MessageRow | undefined;
    const recording = (current: MessageRow | null) => {
      const decision = rule(current);
      written = decision.row;
      return decision;
    };
    // A part this ledger submitted: its row is known, and the receipt is one write.
    const known = this.#known.byCarrierId(receipt.carrierIds);
    let applied: ReceiptResult;
    if (known !== undefined) applied = await this.#writer.update(known.record.ref, recording, known);
    else {
      const row = await this.#store.findByCarrierId(receipt.carrierIds);
      if (row === null) return { kind: 'unknown' };
      applied = await this.#writer.updateRead(row, recording);
    }
    const leasedReport = applied.kind === 'terminal' ? applied.transition.leasedReport : applied.kind === 'part' ? applied.leasedReport : undefined;
    if (leasedReport !== undefined && written !== undefined) this.#reports.leased(leasedReport.uid, written);
    return applied;
  }

  /** The principal's message `ref`, or `null`. */
  async getMessage(principalId: string, ref: string): Promise<MessageRecord | null> {
    const row = await this.#store.getMessage(ref);
    return row === null || row.record.principalId !== principalId ? null : copyRecord(row.record);
  }

  /** The principal's messages with `externalId`, newest first, at most `limit`. */
  async findByExternalId(principalId: string, externalId: string, limit: number): Promise<MessageRecord[]> {
    const rows = await this.#store.findByExternalId(principalId, externalId, limit);
    return rows.map((row: MessageRow) => copyRecord(row.record));
  }

  /** Leases up to `limit` due pending delivery reports, earliest due first. */
  claimCallbacks(options: ClaimOptions): Promise<DueCallback[]> {
    return this.#reports.claim(options);
  }

  /** Makes pending claimed reports claimable again at `until`. */
  deferCallbacks(uids: readonly string[], until: number): Promise<void> {
    return this.#reports.defer(uids, until);
  }

  /** Records one attempt of report `uid` and ends its lease; ignored once it is finished. */
  recordCallbackAttempt(uid: string, attempt: CallbackAttempt): Promise<void> {
    return this.#reports.recordAttempt(uid, attempt);
  }

  /** Redacts the texts of up to `limit` ended messages whose `retainText` (`days:N`) came due by `now`; how many. */
  redactTexts(now: number, limit: number): Promise<number> {
    return this.#sweeps.redactTexts(now, limit);
  }

  /** Deletes up to `limit` ended messages without a pending report, changed before `before`, oldest first. */
  purge(before: number, limit: number): Promise<number> {
    return this.#sweeps.purge(before, limit);
  }
}

// The optional methods the store may lack (lifecycle, queue count, list, inbound, erase) are set by the
// constructor when it has them; this declares them on the class.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface Ledger extends Partial<InboundStorage>, EraseStorage {
  ready?(): Promise<void>;
  close?(): Promise<void>;
  countQueued?(principalId?: string): Promise<QueueCount>;
  countedUnits?(principalId: string, period: string): Promise<number>;
  purgeCounters?(live: readonly string[], limit: number): Promise<number>;
  listMessages?(query: MessageListQuery): Promise<MessageListPage>;
  readReports?(principalId: string, after: number | null, limit: number): Promise<LoggedReport[]>;
  listCallbacks?(query: CallbackListQuery): Promise<MessageListPage>;
  replayCallbacks?(selection: ReplaySelection, now: number): Promise<number>;
}

/**
 * The full {@link Storage} contract over `store`, a {@link RecordStore}: every business rule
 * is the ledger's, the store only stores. `createSmsRouter({ storage })` wraps a record
 * store with it.
 */
export function createLedger(store: RecordStore): Storage {
  return new Ledger(store);
}

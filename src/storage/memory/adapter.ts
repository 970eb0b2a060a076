/**
 * The memory storage, `MemoryStorage`: plain Maps in this process, the default when a host
 * names no storage. The class keeps the contract's rules (which state may move to which,
 * when a report is made); what a claim takes is in claims.ts, the lookups by external id and
 * carrier id in indexes.ts, what the sweeps take, by age, in by-age.ts and timed.ts, and the
 * stored shapes and their copying in records.ts.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { foldParts, isTerminal } from '../../lifecycle/states.js';
import { MessageQueue, ReportQueue } from './claims.js';
import { CarrierIdIndex, ExternalIdIndex, LaterPart } from './indexes.js';
import { IdempotencyRecords } from './idempotency.js';
import { MemoryCredit } from './credit.js';
import { MemoryInbound } from './inbound.js';
import { delegateInbound, type InboundStorage } from '../inbound-record.js';
import { copyRecord, leaseIsLive, SharedOutcomes, StoredMessage, type StoredCallback } from './records.js';
import { TimedMessages } from './timed.js';
import { PurgeOrder, ReceiptWait } from './by-age.js';
import { CANCELLED, leaseBarsCancel, validityElapsed, VALIDITY_ELAPSED } from '../../lifecycle/timing.js';
import type {
  CancelResult,
  CallbackAttempt,
  CallbackState,
  ClaimOptions,
  CreditCharge,
  DueCallback,
  IdempotencyRecord,
  InsertLease,
  MessageRecord,
  NewMessage,
  Outcome,
  PartReceipt,
  QueueCount,
  ReceiptResult,
  Storage,
  SubmissionResult,
  Transition,
} from '../contract.js';

/**
 * Storage in this process's memory: the default.
 *
 * Everything is lost when the process stops, so an acknowledged message that was not yet
 * submitted is lost with it; use `sms-outbox/sqlite` or `sms-outbox/postgres` where that
 * matters. Serves one process only: two instances (or two processes) do not share state.
 * Records are copied in and out, so a caller cannot change stored state by mutating them.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class MemoryStorage implements Storage {
  private readonly messages = new Map<string, StoredMessage>();
  /** The `queued` messages in fair order, which a claim takes from. */
  private readonly queue = new MessageQueue();
  private readonly externalIds = new ExternalIdIndex();
  private readonly carrierIds = new CarrierIdIndex();
  /** Receipt outcomes already stored, shared by every part that got an equal one. */
  private readonly outcomes = new SharedOutcomes();
  private readonly callbacks = new Map<string, StoredCallback>();
  /** The pending reports, which a report claim takes from. */
  private readonly reports = new ReportQueue();
  private readonly idempotency = new IdempotencyRecords();
  /** Scheduled messages by when they are due, and queued ones by when their validity ends. */
  private readonly timed = new TimedMessages();
  /** Ended messages a purge may take, and submitted ones the receipt timeout may end, each by age (by-age.ts). */
  private readonly purgeable = new PurgeOrder();
  private readonly awaitingReceipt = new ReceiptWait();
  private readonly credit = new MemoryCredit();
  private seq = 0;

  constructor() {
    delegateInbound(this, new MemoryInbound());
  }

  /** Nothing to prepare; present so callers can treat every adapter alike. */
  async ready(): Promise<void> {}

  /** Nothing to release; the data stays until the instance is garbage-collected. */
  async close(): Promise<void> {}

  /**
   * Stores every message as `queued` (leased under `lease`) with the idempotency record, if
   * any, with the charge `credit` taken, or nothing if any ref or the record's key is already
   * taken or the balance is short.
   */
  async insertMessages(messages: readonly NewMessage[], lease?: InsertLease, idempotency?: IdempotencyRecord, credit?: CreditCharge): Promise<void> {
    const refs = messages.length > 1 ? new Set<string>() : null;
    for (const message of messages) {
      if (this.messages.has(message.ref) || refs?.has(message.ref) === true) {
        throw new Error(`MemoryStorage: message ref ${JSON.stringify(message.ref)} already exists`);
      }
      refs?.add(message.ref);
    }
    if (credit !== undefined) this.credit.assertPayable(credit);
    if (idempotency !== undefined) this.idempotency.take(idempotency);
    if (credit !== undefined) this.credit.take(credit, messages);
    const stored = messages.map((message) => {
      const record = new StoredMessage(message, this.seq++, lease);
      this.messages.set(message.ref, record);
      this.externalIds.add(message.principalId, message.externalId, message.ref);
      this.timed.add(record, message.weight);
      return record;
    });
    // Scheduled messages join the claim order when due (promoteScheduled), tagged then.
    if (stored.some((record) => record.state === 'scheduled')) {
      const queued = stored.flatMap((record, i) => (record.state === 'queued' ? [i] : []));
      this.queue.add(queued.map((i) => messages[i]!), queued.map((i) => stored[i]!));
    } else this.queue.add(messages, stored);
  }

  /** Queues the scheduled messages due at `now`, tagged as if accepted then, or ends the stale ones (lifecycle/timing.ts). */
  async promoteScheduled(now: number, limit: number): Promise<Transition[]> {
    const due = this.timed.due(now, Math.max(0, limit));
    const ended = due.filter(({ message }) => validityElapsed(message.validUntil, now)).map(({ message }) => this.terminate(message, VALIDITY_ELAPSED, now));
    const queued = due.filter(({ message }) => message.state === 'scheduled');
    for (const { message } of queued) {
      message.state = 'queued';
      message.updatedAt = now;
      message.nextAttemptAt = now;
    }
    this.queue.add(queued, queued.map(({ message }) => message), now);
    return [...ended, ...queued.map(({ message }): Transition => ({ message: copyRecord(message), previousState: 'scheduled' }))];
  }

  /** Ends the queued messages whose validity ended by `now` and that no lease holds (lifecycle/timing.ts). */
  async expireUnsent(now: number, limit: number): Promise<Transition[]> {
    const stale = this.timed.stale(now, Math.max(0, limit), (message) => !leaseIsLive(message.leaseUntil, now));
    return stale.map((message) => this.terminate(message, VALIDITY_ELAPSED, now));
  }

  /** Cancels each of the principal's `refs` still scheduled, or queued with nothing submitted and no lease. */
  async cancelMessages(principalId: string, refs: readonly string[], now: number): Promise<CancelResult> {
    const result: CancelResult = { cancelled: [], notCancelled: [] };
    for (const ref of new Set(refs)) {
      const stored = this.messages.get(ref);
      if (stored === undefined || stored.principalId !== principalId) continue;
      const unsent = stored.state === 'queued' && !leaseBarsCancel(stored.leaseUntil, now) && stored.parts.every((p) => p.carrierId === null);
      if (stored.state === 'scheduled' || unsent) result.cancelled.push(this.terminate(stored, CANCELLED, now));
      else result.notCancelled.push({ ref, state: stored.state });
    }
    return result;
  }

  /** The principal's live idempotency record under `key`, or `null`. */
  findIdempotency(principalId: string, key: string, now: number): IdempotencyRecord | null {
    return this.idempotency.find(principalId, key, now);
  }

  /** Deletes up to `limit` idempotency records expired at `now`, oldest expiry first. */
  async purgeIdempotency(now: number, limit: number): Promise<number> {
    return this.idempotency.purge(now, limit);
  }

  /** Adds `units` to the principal's credit balance; resolves with the new balance. */
  async topUpCredit(principalId: string, units: number): Promise<number> {
    return this.credit.topUp(principalId, units);
  }

  /** The principal's credit balance, 0 when never topped up. */
  async creditBalance(principalId: string): Promise<number> {
    return this.credit.balance(principalId);
  }

  /** Leases up to `limit` due, unleased `queued` messages, in fair order (claims.ts). */
  async claimMessages(options: ClaimOptions): Promise<MessageRecord[]> {
    return this.queue.claim(options).map(copyRecord);
  }

  /**
   * The queued messages (leased and not due ones too) by class and the oldest one's
   * acceptance time, of everyone or of `principalId`: O(1) per class, kept by the queue as
   * messages enter and leave it (claims.ts).
   */
  async countQueued(principalId?: string): Promise<QueueCount> {
    return this.queue.count(principalId);
  }

  /** Records a part's carrier id; moves the message to `submitted` with its last part. */
  async recordSubmission(ref: string, index: number, carrierId: string, now: number): Promise<SubmissionResult> {
    const stored = this.messages.get(ref);
    const part = stored?.parts[index];
    if (stored === undefined || part === undefined) return { kind: 'stale', ref };
    // Indexed whatever the state, so a receipt for a late submission is matched (and
    // reported `late`) rather than `unknown`.
    this.carrierIds.set(carrierId, stored, index);
    if (part.carrierId !== null && part.carrierId !== carrierId) {
      (stored.replacedCarrierIds ??= []).push(part.carrierId);
    }
    part.carrierId = carrierId;
    if (stored.state !== 'queued') return { kind: 'stale', ref };
    if (stored.parts.some((p) => p.carrierId === null)) {
      stored.updatedAt = now;
      return { kind: 'part', ref };
    }
    stored.state = 'submitted';
    stored.updatedAt = now;
    this.release(stored);
    this.awaitingReceipt.add(stored);
    return { kind: 'submitted', transition: { message: copyRecord(stored), previousState: 'queued' } };
  }

  /** Gives a `queued` message back for another attempt at `nextAttemptAt`. */
  async reschedule(ref: string, nextAttemptAt: number, error: string, now: number): Promise<void> {
    const stored = this.messages.get(ref);
    if (stored === undefined || stored.state !== 'queued') return;
    stored.attempts += 1;
    stored.lastError = error;
    stored.updatedAt = now;
    stored.nextAttemptAt = nextAttemptAt;
    stored.leaseOwner = null;
    stored.leaseUntil = null;
    // It keeps its place in the fair order, and is claimed first once due.
    this.queue.retry(stored);
  }

  /** Ends a message that is not yet terminal; `null` if it already is (or is unknown). */
  async finish(ref: string, outcome: Outcome, now: number): Promise<Transition | null> {
    const stored = this.messages.get(ref);
    if (stored === undefined || isTerminal(stored.state)) return null;
    return this.terminate(stored, outcome, now);
  }

  /** Ends `submitted` messages unchanged since before `before`, oldest first (by-age.ts). */
  async expireOverdue(before: number, limit: number, outcome: Outcome, now: number): Promise<Transition[]> {
    return this.awaitingReceipt.overdue(before, limit).map((stored) => this.terminate(stored, outcome, now));
  }

  /** Applies a receipt to the first stored part one of its carrier-id spellings names. */
  async applyReceipt(receipt: PartReceipt): Promise<ReceiptResult> {
    const found = this.carrierIds.find(receipt.carrierIds);
    if (found === undefined) return { kind: 'unknown' };
    const stored = found instanceof LaterPart ? found.message : found;
    const part = stored.parts[found instanceof LaterPart ? found.index : 0]!;
    if (part.outcome !== null) return { kind: 'duplicate', ref: stored.ref };
    part.outcome = this.outcomes.share(receipt.outcome);
    if (isTerminal(stored.state)) return { kind: 'late', ref: stored.ref };
    const folded = foldParts(stored.parts.map((p) => p.outcome));
    if (folded === null) {
      stored.updatedAt = receipt.now;
      return { kind: 'part', ref: stored.ref };
    }
    return { kind: 'terminal', ref: stored.ref, transition: this.terminate(stored, folded, receipt.now, receipt.reportLease) };
  }

  /** The principal's message `ref`, or `null`. */
  async getMessage(principalId: string, ref: string): Promise<MessageRecord | null> {
    const stored = this.messages.get(ref);
    if (stored === undefined || stored.principalId !== principalId) return null;
    return copyRecord(stored);
  }

  /** The principal's messages with `externalId`, newest first, at most `limit`. */
  async findByExternalId(principalId: string, externalId: string, limit: number): Promise<MessageRecord[]> {
    const refs = this.externalIds.refs(principalId, externalId);
    if (refs === undefined) return [];
    const found = refs.map((ref) => this.messages.get(ref)!);
    found.sort((a, b) => b.createdAt - a.createdAt || b.seq - a.seq);
    return found.slice(0, Math.max(0, limit)).map(copyRecord);
  }

  /** Leases up to `limit` due pending delivery reports, oldest due first (claims.ts). */
  async claimCallbacks(options: ClaimOptions): Promise<DueCallback[]> {
    return this.reports.claim(options).map((callback) => ({
      uid: callback.uid,
      attempts: callback.state.attempts,
      message: copyRecord(this.messages.get(callback.ref)!),
    }));
  }

  /** Makes pending claimed reports claimable again at `until`. */
  async deferCallbacks(uids: readonly string[], until: number): Promise<void> {
    for (const uid of uids) {
      const callback = this.callbacks.get(uid);
      if (callback !== undefined && callback.state.state === 'pending') this.reports.lease(callback, callback.leaseOwner, until);
    }
  }

  /** Records one attempt of report `uid` and ends its lease; ignored once it is finished. */
  async recordCallbackAttempt(uid: string, attempt: CallbackAttempt): Promise<void> {
    const callback = this.callbacks.get(uid);
    if (callback === undefined || callback.state.state !== 'pending') return;
    const state = callback.state;
    state.attempts += 1;
    state.lastStatusCode = attempt.statusCode;
    state.lastError = attempt.error;
    this.reports.release(callback);
    if (attempt.result === 'retry') {
      state.nextAttemptAt = attempt.nextAttemptAt ?? attempt.now;
      this.reports.queue(callback, state.nextAttemptAt);
      return;
    }
    state.state = attempt.result;
    state.nextAttemptAt = null;
    this.purgeable.add(this.messages.get(callback.ref)!);
  }

  /** Deletes up to `limit` terminal messages changed before `before` without a pending report, oldest first (by-age.ts). */
  async purge(before: number, limit: number): Promise<number> {
    const purged = this.purgeable.take(before, limit);
    for (const stored of purged) this.remove(stored);
    return purged.length;
  }

  /** Ends `stored`'s lease and takes it out of the queue: it is no longer `queued`. */
  private release(stored: StoredMessage): void {
    stored.leaseOwner = null;
    stored.leaseUntil = null;
    this.queue.delete(stored);
  }

  /** Moves a non-terminal message to `outcome`, creating its pending report with it (leased under `lease` if given). */
  private terminate(record: StoredMessage, outcome: Outcome, now: number, lease?: InsertLease): Transition {
    const previousState = record.state;
    record.state = outcome.state;
    record.statusReason = outcome.reason;
    record.statusDescription = outcome.description;
    record.updatedAt = now;
    this.release(record);
    // In the step that ends it, so that its refund is given exactly once.
    this.credit.settle(previousState, record);
    if (record.callbackUrl === null) this.purgeable.add(record);
    else {
      const uid = randomUUID();
      const state: CallbackState = { state: 'pending', attempts: 0, lastStatusCode: null, lastError: null, nextAttemptAt: now };
      record.callback = state;
      const callback: StoredCallback = { uid, ref: record.ref, seq: this.seq++, leaseOwner: null, leaseUntil: null, state, version: 0 };
      this.callbacks.set(uid, callback);
      record.callbackUid = uid;
      if (lease === undefined) this.reports.queue(callback, now);
      else {
        this.reports.lease(callback, lease.owner, lease.until);
        return { message: copyRecord(record), previousState, leasedReport: { uid, until: lease.until } };
      }
    }
    return { message: copyRecord(record), previousState };
  }

  /** Forgets `record` and every index entry of it. */
  private remove(record: StoredMessage): void {
    this.messages.delete(record.ref);
    this.credit.forget(record.ref);
    this.queue.delete(record);
    this.externalIds.remove(record.principalId, record.externalId, record.ref);
    for (const part of record.parts) if (part.carrierId !== null) this.carrierIds.drop(part.carrierId, record);
    for (const carrierId of record.replacedCarrierIds ?? []) this.carrierIds.drop(carrierId, record);
    // Purge takes no message with a pending report, so the report is neither leased nor due:
    // any entry of it left in the due queue is skipped as not pending.
    if (record.callbackUid !== null) this.callbacks.delete(record.callbackUid);
  }
}

// The inbound methods ({@link InboundStorage}, in inbound.ts) are set by the constructor
// (`delegateInbound`); this declares them on the class.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface MemoryStorage extends InboundStorage {}

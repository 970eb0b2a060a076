/**
 * The in-memory storage: plain Maps in this process, the default when a host names none.
 */
import { randomUUID } from 'node:crypto';
import { foldParts, isTerminal } from '../lifecycle/states.js';
import type {
  CallbackAttempt,
  CallbackState,
  ClaimOptions,
  DueCallback,
  MessageRecord,
  NewMessage,
  Outcome,
  PartReceipt,
  PartRecord,
  ReceiptResult,
  Storage,
  SubmissionResult,
  Transition,
} from './contract.js';

interface StoredMessage {
  record: MessageRecord;
  /** Insertion order, the tie-break after `createdAt`. */
  seq: number;
  nextAttemptAt: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  callbackUid: string | null;
  /** Every carrier id any part was given, so purge can drop their index entries. */
  carrierIds: string[];
}

interface StoredCallback {
  uid: string;
  ref: string;
  seq: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
}

interface PartAddress {
  ref: string;
  index: number;
}

function copyOutcome(outcome: Outcome | null): Outcome | null {
  return outcome === null ? null : { ...outcome };
}

function copyParts(parts: readonly PartRecord[]): PartRecord[] {
  return parts.map((part) => ({ index: part.index, carrierId: part.carrierId, outcome: copyOutcome(part.outcome) }));
}

function copyRecord(record: MessageRecord): MessageRecord {
  return {
    ...record,
    parts: copyParts(record.parts),
    callback: record.callback === null ? null : { ...record.callback },
  };
}

function leaseIsLive(leaseUntil: number | null, now: number): boolean {
  return leaseUntil !== null && leaseUntil > now;
}

/**
 * Storage in this process's memory: the default.
 *
 * Everything is lost when the process stops, so an acknowledged message that was not yet
 * submitted is lost with it; use `sms-outbox/sqlite` or `sms-outbox/postgres` where that
 * matters. Serves one process only: two instances (or two processes) do not share state.
 * Records are copied in and out, so a caller cannot change stored state by mutating them.
 */
export class MemoryStorage implements Storage {
  private readonly messages = new Map<string, StoredMessage>();
  /** Refs of messages in state `queued`, the only ones a claim looks at. */
  private readonly queued = new Set<string>();
  /** principalId -> externalId -> refs. */
  private readonly byExternalId = new Map<string, Map<string, Set<string>>>();
  private readonly carrierIds = new Map<string, PartAddress>();
  private readonly callbacks = new Map<string, StoredCallback>();
  /** Uids of pending callbacks, the only ones a callback claim looks at. */
  private readonly pendingCallbacks = new Set<string>();
  private seq = 0;

  /** Nothing to prepare; present so callers can treat every adapter alike. */
  async ready(): Promise<void> {}

  /** Nothing to release; the data stays until the instance is garbage-collected. */
  async close(): Promise<void> {}

  /** Stores every message as `queued`, or none if any ref is already taken. */
  async insertMessages(messages: readonly NewMessage[]): Promise<void> {
    const refs = new Set<string>();
    for (const message of messages) {
      if (this.messages.has(message.ref) || refs.has(message.ref)) {
        throw new Error(`MemoryStorage: message ref ${JSON.stringify(message.ref)} already exists`);
      }
      refs.add(message.ref);
    }
    for (const message of messages) {
      const parts: PartRecord[] = [];
      for (let index = 0; index < message.smsCount; index++) parts.push({ index, carrierId: null, outcome: null });
      const record: MessageRecord = {
        ...message,
        state: 'queued',
        statusReason: null,
        statusDescription: null,
        attempts: 0,
        lastError: null,
        updatedAt: message.createdAt,
        parts,
        callback: null,
      };
      this.messages.set(message.ref, {
        record,
        seq: this.seq++,
        nextAttemptAt: message.createdAt,
        leaseOwner: null,
        leaseUntil: null,
        callbackUid: null,
        carrierIds: [],
      });
      this.queued.add(message.ref);
      let ofPrincipal = this.byExternalId.get(message.principalId);
      if (ofPrincipal === undefined) this.byExternalId.set(message.principalId, (ofPrincipal = new Map()));
      let refsOfId = ofPrincipal.get(message.externalId);
      if (refsOfId === undefined) ofPrincipal.set(message.externalId, (refsOfId = new Set()));
      refsOfId.add(message.ref);
    }
  }

  /** Leases up to `limit` due, unleased `queued` messages, oldest first. */
  async claimMessages(options: ClaimOptions): Promise<MessageRecord[]> {
    const due: StoredMessage[] = [];
    for (const ref of this.queued) {
      const stored = this.messages.get(ref)!;
      if (stored.nextAttemptAt <= options.now && !leaseIsLive(stored.leaseUntil, options.now)) due.push(stored);
    }
    due.sort((a, b) => a.record.createdAt - b.record.createdAt || a.seq - b.seq);
    const claimed = due.slice(0, Math.max(0, options.limit));
    for (const stored of claimed) {
      stored.leaseOwner = options.owner;
      stored.leaseUntil = options.now + options.leaseMs;
    }
    return claimed.map((stored) => copyRecord(stored.record));
  }

  /** Records a part's carrier id; moves the message to `submitted` with its last part. */
  async recordSubmission(ref: string, index: number, carrierId: string, now: number): Promise<SubmissionResult> {
    const stored = this.messages.get(ref);
    const part = stored?.record.parts[index];
    if (stored === undefined || part === undefined) return { kind: 'stale', ref };
    // Indexed whatever the state, so a receipt for a late submission is matched (and
    // reported `late`) rather than `unknown`.
    this.carrierIds.set(carrierId, { ref, index });
    stored.carrierIds.push(carrierId);
    part.carrierId = carrierId;
    const record = stored.record;
    if (record.state !== 'queued') return { kind: 'stale', ref };
    if (record.parts.some((p) => p.carrierId === null)) {
      record.updatedAt = now;
      return { kind: 'part', ref };
    }
    record.state = 'submitted';
    record.updatedAt = now;
    this.release(stored);
    return { kind: 'submitted', transition: { message: copyRecord(record), previousState: 'queued' } };
  }

  /** Gives a `queued` message back for another attempt at `nextAttemptAt`. */
  async reschedule(ref: string, nextAttemptAt: number, error: string, now: number): Promise<void> {
    const stored = this.messages.get(ref);
    if (stored === undefined || stored.record.state !== 'queued') return;
    stored.record.attempts += 1;
    stored.record.lastError = error;
    stored.record.updatedAt = now;
    stored.nextAttemptAt = nextAttemptAt;
    stored.leaseOwner = null;
    stored.leaseUntil = null;
  }

  /** Ends a message that is not yet terminal; `null` if it already is (or is unknown). */
  async finish(ref: string, outcome: Outcome, now: number): Promise<Transition | null> {
    const stored = this.messages.get(ref);
    if (stored === undefined || isTerminal(stored.record.state)) return null;
    return this.terminate(stored, outcome, now);
  }

  /** Ends `submitted` messages unchanged since before `before`, oldest first. */
  async expireOverdue(before: number, limit: number, outcome: Outcome, now: number): Promise<Transition[]> {
    const overdue: StoredMessage[] = [];
    for (const stored of this.messages.values()) {
      if (stored.record.state === 'submitted' && stored.record.updatedAt < before) overdue.push(stored);
    }
    overdue.sort((a, b) => a.record.updatedAt - b.record.updatedAt || a.seq - b.seq);
    return overdue.slice(0, Math.max(0, limit)).map((stored) => this.terminate(stored, outcome, now));
  }

  /** Applies a receipt to the first stored part one of its carrier-id spellings names. */
  async applyReceipt(receipt: PartReceipt): Promise<ReceiptResult> {
    let address: PartAddress | undefined;
    for (const carrierId of receipt.carrierIds) {
      address = this.carrierIds.get(carrierId);
      if (address !== undefined) break;
    }
    if (address === undefined) return { kind: 'unknown' };
    const { ref, index } = address;
    const stored = this.messages.get(ref)!;
    const part = stored.record.parts[index]!;
    if (part.outcome !== null) return { kind: 'duplicate', ref };
    part.outcome = { ...receipt.outcome };
    if (isTerminal(stored.record.state)) return { kind: 'late', ref };
    const folded = foldParts(stored.record.parts.map((p) => p.outcome));
    if (folded === null) {
      stored.record.updatedAt = receipt.now;
      return { kind: 'part', ref };
    }
    return { kind: 'terminal', ref, transition: this.terminate(stored, folded, receipt.now) };
  }

  /** The principal's message `ref`, or `null`. */
  async getMessage(principalId: string, ref: string): Promise<MessageRecord | null> {
    const stored = this.messages.get(ref);
    if (stored === undefined || stored.record.principalId !== principalId) return null;
    return copyRecord(stored.record);
  }

  /** The principal's messages with `externalId`, newest first, at most `limit`. */
  async findByExternalId(principalId: string, externalId: string, limit: number): Promise<MessageRecord[]> {
    const refs = this.byExternalId.get(principalId)?.get(externalId);
    if (refs === undefined) return [];
    const found = [...refs].map((ref) => this.messages.get(ref)!);
    found.sort((a, b) => b.record.createdAt - a.record.createdAt || b.seq - a.seq);
    return found.slice(0, Math.max(0, limit)).map((stored) => copyRecord(stored.record));
  }

  /** Leases up to `limit` due pending delivery reports, oldest due first. */
  async claimCallbacks(options: ClaimOptions): Promise<DueCallback[]> {
    const due: { callback: StoredCallback; state: CallbackState; message: MessageRecord }[] = [];
    for (const uid of this.pendingCallbacks) {
      const callback = this.callbacks.get(uid)!;
      const message = this.messages.get(callback.ref)!.record;
      const state = message.callback!;
      if ((state.nextAttemptAt ?? 0) <= options.now && !leaseIsLive(callback.leaseUntil, options.now)) {
        due.push({ callback, state, message });
      }
    }
    due.sort((a, b) => (a.state.nextAttemptAt ?? 0) - (b.state.nextAttemptAt ?? 0) || a.callback.seq - b.callback.seq);
    return due.slice(0, Math.max(0, options.limit)).map(({ callback, state, message }) => {
      callback.leaseOwner = options.owner;
      callback.leaseUntil = options.now + options.leaseMs;
      return { uid: callback.uid, attempts: state.attempts, message: copyRecord(message) };
    });
  }

  /** Records one attempt of report `uid` and ends its lease; ignored once it is finished. */
  async recordCallbackAttempt(uid: string, attempt: CallbackAttempt): Promise<void> {
    const callback = this.callbacks.get(uid);
    if (callback === undefined || !this.pendingCallbacks.has(uid)) return;
    const state = this.messages.get(callback.ref)!.record.callback!;
    state.attempts += 1;
    state.lastStatusCode = attempt.statusCode;
    state.lastError = attempt.error;
    callback.leaseOwner = null;
    callback.leaseUntil = null;
    if (attempt.result === 'retry') {
      state.nextAttemptAt = attempt.nextAttemptAt ?? attempt.now;
      return;
    }
    state.state = attempt.result;
    state.nextAttemptAt = null;
    this.pendingCallbacks.delete(uid);
  }

  /** Deletes up to `limit` terminal messages changed before `before` without a pending report. */
  async purge(before: number, limit: number): Promise<number> {
    const doomed: StoredMessage[] = [];
    for (const stored of this.messages.values()) {
      const record = stored.record;
      if (!isTerminal(record.state) || record.updatedAt >= before) continue;
      if (record.callback !== null && record.callback.state === 'pending') continue;
      doomed.push(stored);
    }
    doomed.sort((a, b) => a.record.updatedAt - b.record.updatedAt || a.seq - b.seq);
    const purged = doomed.slice(0, Math.max(0, limit));
    for (const stored of purged) this.remove(stored);
    return purged.length;
  }

  private release(stored: StoredMessage): void {
    stored.leaseOwner = null;
    stored.leaseUntil = null;
    this.queued.delete(stored.record.ref);
  }

  /** Moves a non-terminal message to `outcome`, creating its pending report with it. */
  private terminate(stored: StoredMessage, outcome: Outcome, now: number): Transition {
    const record = stored.record;
    const previousState = record.state;
    record.state = outcome.state;
    record.statusReason = outcome.reason;
    record.statusDescription = outcome.description;
    record.updatedAt = now;
    this.release(stored);
    if (record.callbackUrl !== null) {
      const uid = randomUUID();
      record.callback = { state: 'pending', attempts: 0, lastStatusCode: null, lastError: null, nextAttemptAt: now };
      this.callbacks.set(uid, { uid, ref: record.ref, seq: this.seq++, leaseOwner: null, leaseUntil: null });
      this.pendingCallbacks.add(uid);
      stored.callbackUid = uid;
    }
    return { message: copyRecord(record), previousState };
  }

  private remove(stored: StoredMessage): void {
    const record = stored.record;
    this.messages.delete(record.ref);
    this.queued.delete(record.ref);
    const ofPrincipal = this.byExternalId.get(record.principalId);
    const refs = ofPrincipal?.get(record.externalId);
    refs?.delete(record.ref);
    if (refs?.size === 0) ofPrincipal!.delete(record.externalId);
    if (ofPrincipal?.size === 0) this.byExternalId.delete(record.principalId);
    for (const carrierId of stored.carrierIds) {
      // A carrier may reuse an id for a later message; that entry is not ours to drop.
      if (this.carrierIds.get(carrierId)?.ref === record.ref) this.carrierIds.delete(carrierId);
    }
    if (stored.callbackUid !== null) {
      this.callbacks.delete(stored.callbackUid);
      this.pendingCallbacks.delete(stored.callbackUid);
    }
  }
}

/**
 * The in-memory storage: plain Maps in this process, the default when a host names none.
 */
import { randomUUID } from 'node:crypto';
import { foldParts, isTerminal } from '../lifecycle/states.js';
import { MinHeap } from '../util/min-heap.js';
import { QueuedRecord } from './queued-record.js';
import type {
  CallbackAttempt,
  CallbackState,
  ClaimOptions,
  DueCallback,
  InsertLease,
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

/**
 * A stored message: its record's fields in place (copied out on every read, never handed
 * out), plus what claims and purges need. One object per message rather than a wrapper
 * around a record: every object kept per message costs memory for as long as the message
 * is retained, and marking and copying time at every garbage collection.
 */
class StoredMessage extends QueuedRecord {
  // Declared, not defined: every field is set once in the constructor, in one order.
  /** Insertion order, the tie-break after `createdAt`. */
  declare seq: number;
  declare nextAttemptAt: number;
  declare leaseOwner: string | null;
  declare leaseUntil: number | null;
  declare callbackUid: string | null;
  /**
   * Carrier ids a part was given before it was submitted again (a lease ran out while its
   * owner still worked), so purge can drop their index entries too; `null` in the usual
   * case, where each part's `carrierId` is the only one.
   */
  declare replacedCarrierIds: string[] | null;

  /** `message` as the `seq`-th inserted, leased at once under `lease` if given. */
  constructor(message: NewMessage, seq: number, lease: InsertLease | undefined) {
    super(message);
    this.seq = seq;
    this.nextAttemptAt = message.createdAt;
    this.leaseOwner = lease?.owner ?? null;
    this.leaseUntil = lease?.until ?? null;
    this.callbackUid = null;
    this.replacedCarrierIds = null;
  }
}

interface StoredCallback {
  uid: string;
  ref: string;
  seq: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  /** The report's state: the very object its message record holds, so the two never differ. */
  state: CallbackState;
  /** Counts its leases and attempts, so a due-queue entry made before the last one is known stale. */
  version: number;
}

/** A report's place in the due queue; stale once its callback's `version` has moved on. */
interface DueEntry {
  at: number;
  seq: number;
  callback: StoredCallback;
  version: number;
}

/** Due order: the earlier next attempt first, then the older report. */
const dueFirst = (a: DueEntry, b: DueEntry): boolean => a.at < b.at || (a.at === b.at && a.seq < b.seq);

/**
 * Where a carrier id points when it is not a message's first part. The carrier-id index
 * holds a first part's message itself (most messages have one part), so the usual case
 * keeps no address object.
 */
class LaterPart {
  constructor(
    readonly message: StoredMessage,
    readonly index: number,
  ) {}
}

function copyOutcome(outcome: Outcome | null): Outcome | null {
  return outcome === null ? null : { ...outcome };
}

function copyParts(parts: readonly PartRecord[]): PartRecord[] {
  return parts.map((part) => ({ index: part.index, carrierId: part.carrierId, outcome: copyOutcome(part.outcome) }));
}

// Field by field rather than by spread: every record then shares one object shape, the
// copy is several times cheaper (it runs for every claim and every transition), and a
// stored message's own fields (lease, seq) stay inside.
function copyRecord(record: MessageRecord): MessageRecord {
  return {
    ref: record.ref,
    principalId: record.principalId,
    endpoint: record.endpoint,
    profileCode: record.profileCode,
    sender: record.sender,
    recipient: record.recipient,
    text: record.text,
    messageType: record.messageType,
    reqType: record.reqType,
    externalId: record.externalId,
    recipientField: record.recipientField,
    referenceField: record.referenceField,
    smsCount: record.smsCount,
    encoding: record.encoding,
    callbackUrl: record.callbackUrl,
    callbackSecret: record.callbackSecret,
    createdAt: record.createdAt,
    state: record.state,
    statusReason: record.statusReason,
    statusDescription: record.statusDescription,
    attempts: record.attempts,
    lastError: record.lastError,
    updatedAt: record.updatedAt,
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
  /**
   * principalId -> externalId -> refs. Most external ids name one message, so one ref is
   * kept as the string itself; a Set per message would cost about 150 bytes each.
   */
  private readonly byExternalId = new Map<string, Map<string, string | Set<string>>>();
  /** carrierId -> the part it names: its message when it is part 0, else a {@link LaterPart}. */
  private readonly carrierIds = new Map<string, StoredMessage | LaterPart>();
  /** Receipt outcomes already stored, shared by every part that got an equal one. */
  private readonly outcomes = new SharedOutcomes();
  private readonly callbacks = new Map<string, StoredCallback>();
  /**
   * Pending reports not under a lease, by due order: a claim takes from the top rather than
   * walk and sort every pending report (it did, and with thousands waiting that was a fifth
   * of the dispatcher's CPU). Entries are left behind when a report is leased or attempted
   * and skipped when they come up.
   */
  private readonly dueCallbacks = new MinHeap<DueEntry>(dueFirst);
  /** Pending reports under a lease (being sent, or deferred); due again when it ends. */
  private readonly leasedCallbacks = new Set<StoredCallback>();
  /** No lease in `leasedCallbacks` ends before this (it may be earlier than the true first). */
  private earliestLeaseEnd = Infinity;
  private seq = 0;
  /** The latest `createdAt` inserted, and whether every insert came in `createdAt` order. */
  private lastCreatedAt = -Infinity;
  private createdInOrder = true;

  /** Nothing to prepare; present so callers can treat every adapter alike. */
  async ready(): Promise<void> {}

  /** Nothing to release; the data stays until the instance is garbage-collected. */
  async close(): Promise<void> {}

  /** Stores every message as `queued` (leased under `lease`), or none if any ref is already taken. */
  async insertMessages(messages: readonly NewMessage[], lease?: InsertLease): Promise<void> {
    const refs = messages.length > 1 ? new Set<string>() : null;
    for (const message of messages) {
      if (this.messages.has(message.ref) || refs?.has(message.ref) === true) {
        throw new Error(`MemoryStorage: message ref ${JSON.stringify(message.ref)} already exists`);
      }
      refs?.add(message.ref);
    }
    for (const message of messages) {
      // Claims walk `queued` in insertion order and stop early while that is also the
      // (createdAt, seq) order, i.e. while no message was created before the previous one.
      if (message.createdAt < this.lastCreatedAt) this.createdInOrder = false;
      else this.lastCreatedAt = message.createdAt;
      this.messages.set(message.ref, new StoredMessage(message, this.seq++, lease));
      this.queued.add(message.ref);
      let ofPrincipal = this.byExternalId.get(message.principalId);
      if (ofPrincipal === undefined) this.byExternalId.set(message.principalId, (ofPrincipal = new Map()));
      const refsOfId = ofPrincipal.get(message.externalId);
      if (refsOfId === undefined) ofPrincipal.set(message.externalId, message.ref);
      else if (typeof refsOfId === 'string') ofPrincipal.set(message.externalId, new Set([refsOfId, message.ref]));
      else refsOfId.add(message.ref);
    }
  }

  /** Leases up to `limit` due, unleased `queued` messages, oldest first. */
  async claimMessages(options: ClaimOptions): Promise<MessageRecord[]> {
    const due: StoredMessage[] = [];
    const limit = Math.max(0, options.limit);
    // `queued` holds refs in insertion (seq) order; while that is also createdAt order the
    // first `limit` due ones are the answer, and a backlog of thousands is not walked and
    // sorted on every claim.
    const inOrder = this.createdInOrder;
    for (const ref of this.queued) {
      if (inOrder && due.length >= limit) break;
      const stored = this.messages.get(ref)!;
      if (stored.nextAttemptAt <= options.now && !leaseIsLive(stored.leaseUntil, options.now)) due.push(stored);
    }
    if (!inOrder) due.sort((a, b) => a.createdAt - b.createdAt || a.seq - b.seq);
    const claimed = due.length > limit ? due.slice(0, limit) : due;
    for (const stored of claimed) {
      stored.leaseOwner = options.owner;
      stored.leaseUntil = options.now + options.leaseMs;
    }
    return claimed.map(copyRecord);
  }

  /** Records a part's carrier id; moves the message to `submitted` with its last part. */
  async recordSubmission(ref: string, index: number, carrierId: string, now: number): Promise<SubmissionResult> {
    const stored = this.messages.get(ref);
    const part = stored?.parts[index];
    if (stored === undefined || part === undefined) return { kind: 'stale', ref };
    // Indexed whatever the state, so a receipt for a late submission is matched (and
    // reported `late`) rather than `unknown`.
    this.carrierIds.set(carrierId, index === 0 ? stored : new LaterPart(stored, index));
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
  }

  /** Ends a message that is not yet terminal; `null` if it already is (or is unknown). */
  async finish(ref: string, outcome: Outcome, now: number): Promise<Transition | null> {
    const stored = this.messages.get(ref);
    if (stored === undefined || isTerminal(stored.state)) return null;
    return this.terminate(stored, outcome, now);
  }

  /** Ends `submitted` messages unchanged since before `before`, oldest first. */
  async expireOverdue(before: number, limit: number, outcome: Outcome, now: number): Promise<Transition[]> {
    const overdue: StoredMessage[] = [];
    for (const stored of this.messages.values()) {
      if (stored.state === 'submitted' && stored.updatedAt < before) overdue.push(stored);
    }
    overdue.sort((a, b) => a.updatedAt - b.updatedAt || a.seq - b.seq);
    return overdue.slice(0, Math.max(0, limit)).map((stored) => this.terminate(stored, outcome, now));
  }

  /** Applies a receipt to the first stored part one of its carrier-id spellings names. */
  async applyReceipt(receipt: PartReceipt): Promise<ReceiptResult> {
    let found: StoredMessage | LaterPart | undefined;
    for (const carrierId of receipt.carrierIds) {
      found = this.carrierIds.get(carrierId);
      if (found !== undefined) break;
    }
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
    const refs = this.byExternalId.get(principalId)?.get(externalId);
    if (refs === undefined) return [];
    const found = (typeof refs === 'string' ? [refs] : [...refs]).map((ref) => this.messages.get(ref)!);
    found.sort((a, b) => b.createdAt - a.createdAt || b.seq - a.seq);
    return found.slice(0, Math.max(0, limit)).map(copyRecord);
  }

  /** Leases up to `limit` due pending delivery reports, oldest due first. */
  async claimCallbacks(options: ClaimOptions): Promise<DueCallback[]> {
    this.endLeases(options.now);
    const claimed: DueCallback[] = [];
    while (claimed.length < options.limit) {
      const top = this.dueCallbacks.peek();
      if (top === undefined || top.at > options.now) break;
      this.dueCallbacks.pop();
      const callback = top.callback;
      if (callback.state.state !== 'pending' || top.version !== callback.version) continue;
      if (leaseIsLive(callback.leaseUntil, options.now)) {
        // Its lease ended at a later `now` than this one: under this clock it still holds.
        this.lease(callback, callback.leaseOwner, callback.leaseUntil!);
        continue;
      }
      this.lease(callback, options.owner, options.now + options.leaseMs);
      claimed.push({ uid: callback.uid, attempts: callback.state.attempts, message: copyRecord(this.messages.get(callback.ref)!) });
    }
    return claimed;
  }

  /** Makes pending claimed reports claimable again at `until`. */
  async deferCallbacks(uids: readonly string[], until: number): Promise<void> {
    for (const uid of uids) {
      const callback = this.callbacks.get(uid);
      if (callback !== undefined && callback.state.state === 'pending') this.lease(callback, callback.leaseOwner, until);
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
    callback.leaseOwner = null;
    callback.leaseUntil = null;
    callback.version++;
    this.leasedCallbacks.delete(callback);
    if (attempt.result === 'retry') {
      state.nextAttemptAt = attempt.nextAttemptAt ?? attempt.now;
      this.queueCallback(callback, state.nextAttemptAt);
      return;
    }
    state.state = attempt.result;
    state.nextAttemptAt = null;
  }

  /** Deletes up to `limit` terminal messages changed before `before` without a pending report. */
  async purge(before: number, limit: number): Promise<number> {
    const doomed: StoredMessage[] = [];
    for (const stored of this.messages.values()) {
      if (!isTerminal(stored.state) || stored.updatedAt >= before) continue;
      if (stored.callback !== null && stored.callback.state === 'pending') continue;
      doomed.push(stored);
    }
    doomed.sort((a, b) => a.updatedAt - b.updatedAt || a.seq - b.seq);
    const purged = doomed.slice(0, Math.max(0, limit));
    for (const stored of purged) this.remove(stored);
    return purged.length;
  }

  /** Puts `callback` in the due queue at `at`, as of its current version. */
  private queueCallback(callback: StoredCallback, at: number): void {
    this.dueCallbacks.push({ at, seq: callback.seq, callback, version: callback.version });
  }

  /** Leases `callback` to `owner` until `until`; its due-queue entries go stale. */
  private lease(callback: StoredCallback, owner: string | null, until: number): void {
    callback.leaseOwner = owner;
    callback.leaseUntil = until;
    callback.version++;
    this.leasedCallbacks.add(callback);
    if (until < this.earliestLeaseEnd) this.earliestLeaseEnd = until;
  }

  /** Puts the reports whose lease has ended by `now` back in the due queue. */
  private endLeases(now: number): void {
    if (now < this.earliestLeaseEnd) return;
    let earliest = Infinity;
    for (const callback of this.leasedCallbacks) {
      const until = callback.leaseUntil!;
      if (until > now) {
        earliest = Math.min(earliest, until);
        continue;
      }
      this.leasedCallbacks.delete(callback);
      this.queueCallback(callback, callback.state.nextAttemptAt ?? 0);
    }
    this.earliestLeaseEnd = earliest;
  }

  private release(stored: StoredMessage): void {
    stored.leaseOwner = null;
    stored.leaseUntil = null;
    this.queued.delete(stored.ref);
  }

  /** Moves a non-terminal message to `outcome`, creating its pending report with it (leased under `lease` if given). */
  private terminate(record: StoredMessage, outcome: Outcome, now: number, lease?: InsertLease): Transition {
    const previousState = record.state;
    record.state = outcome.state;
    record.statusReason = outcome.reason;
    record.statusDescription = outcome.description;
    record.updatedAt = now;
    this.release(record);
    if (record.callbackUrl !== null) {
      const uid = randomUUID();
      const state: CallbackState = { state: 'pending', attempts: 0, lastStatusCode: null, lastError: null, nextAttemptAt: now };
      record.callback = state;
      const callback: StoredCallback = { uid, ref: record.ref, seq: this.seq++, leaseOwner: null, leaseUntil: null, state, version: 0 };
      this.callbacks.set(uid, callback);
      record.callbackUid = uid;
      if (lease === undefined) this.queueCallback(callback, now);
      else {
        this.lease(callback, lease.owner, lease.until);
        return { message: copyRecord(record), previousState, leasedReport: { uid, until: lease.until } };
      }
    }
    return { message: copyRecord(record), previousState };
  }

  private remove(record: StoredMessage): void {
    this.messages.delete(record.ref);
    this.queued.delete(record.ref);
    const ofPrincipal = this.byExternalId.get(record.principalId);
    const refs = ofPrincipal?.get(record.externalId);
    if (refs === record.ref) ofPrincipal!.delete(record.externalId);
    else if (typeof refs === 'object') {
      refs.delete(record.ref);
      if (refs.size === 0) ofPrincipal!.delete(record.externalId);
    }
    if (ofPrincipal?.size === 0) this.byExternalId.delete(record.principalId);
    for (const part of record.parts) if (part.carrierId !== null) this.dropCarrierId(part.carrierId, record);
    for (const carrierId of record.replacedCarrierIds ?? []) this.dropCarrierId(carrierId, record);
    // Purge takes no message with a pending report, so the report is neither leased nor due:
    // any entry of it left in the due queue is skipped as not pending.
    if (record.callbackUid !== null) this.callbacks.delete(record.callbackUid);
  }

  /** Drops `carrierId` from the index if it still names a part of `record`. */
  private dropCarrierId(carrierId: string, record: StoredMessage): void {
    // A carrier may reuse an id for a later message; that entry is not ours to drop.
    const found = this.carrierIds.get(carrierId);
    if (found === record || (found instanceof LaterPart && found.message === record)) this.carrierIds.delete(carrierId);
  }
}

/**
 * Receipt outcomes already stored, so that the parts given equal outcomes share one frozen
 * object instead of keeping a copy each. Carriers send few distinct outcomes (a state, a
 * reason, a short text), so a short list covers them; an outcome not in it when it is full
 * is kept as a copy of its own. Stored outcomes are never changed: reads copy them out.
 */
class SharedOutcomes {
  static readonly #LIMIT = 32;
  readonly #known: Outcome[] = [];

  /** An outcome equal to `outcome` that the store may keep. */
  share(outcome: Outcome): Outcome {
    for (const known of this.#known) {
      if (known.state === outcome.state && known.reason === outcome.reason && known.description === outcome.description) return known;
    }
    const kept = Object.freeze({ ...outcome });
    if (this.#known.length < SharedOutcomes.#LIMIT) this.#known.push(kept);
    return kept;
  }
}

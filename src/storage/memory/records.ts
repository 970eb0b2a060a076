/**
 * What the memory storage keeps for each message and each delivery report, and how a
 * record is copied out of it. Kept compact on purpose: these objects live as long as their
 * message is retained, so every field and every extra object per message costs memory and
 * garbage-collection time for the whole retention period. Records are copied on the way out
 * so a caller can never change stored state by mutating what it was given.
 *
 * @module
 */
import { QueuedRecord } from '../queued-record.js';
import type { CallbackState, InsertLease, MessageRecord, NewMessage, Outcome, PartRecord } from '../contract.js';

/**
 * A stored message: its record's fields in place (copied out on every read, never handed
 * out), plus what claims and purges need. One object per message rather than a wrapper
 * around a record: every object kept per message costs memory for as long as the message
 * is retained, and marking and copying time at every garbage collection.
 */
export class StoredMessage extends QueuedRecord {
  // Declared, not defined: every field is set once in the constructor, in one order.
  /** Insertion (acceptance) order: the tie-break after a claim's fair tag, and after `updatedAt` in expiry and purge. */
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
  /**
   * Its place in the fair order of claims while it is `queued` (claims.ts), `null` once it
   * left the queue: one field for the retention period, the place itself only while queued.
   */
  declare place: Place | null;

  /** `message` as the `seq`-th inserted, leased at once under `lease` if given. */
  constructor(message: NewMessage, seq: number, lease: InsertLease | undefined) {
    super(message);
    // A caller without types may leave it out: bulk, the default.
    this.priority = message.priority ?? 'bulk';
    this.seq = seq;
    this.nextAttemptAt = message.createdAt;
    this.leaseOwner = lease?.owner ?? null;
    this.leaseUntil = lease?.until ?? null;
    this.callbackUid = null;
    this.replacedCarrierIds = null;
    this.place = null;
  }
}

/**
 * A queued message's place in the fair order of claims: its class's rank and its virtual
 * finish tag (lifecycle/fair-tags.ts), given when it is stored and kept through retries.
 * Referred to by the claim's heaps and its principal's backlog, and dropped by its message
 * (`place` set to `null`) when it leaves the queue, which makes every such reference stale.
 */
export class Place {
  /** Where it waits: {@link Place.READY}, {@link Place.LEASED}, or the number of its entry in the not-due heap. */
  where: number;

  /** In the heap of its class that claims take from. */
  static readonly READY = -1;
  /** In the set of leased places, until its lease ends. */
  static readonly LEASED = -2;

  /** Its message's insertion order, the tie-break after the tag (here, so that a claim's heap need not read the message). */
  readonly seq: number;

  /** When its message joined the queue (`sendAt ?? createdAt`), the order of the heaps `countQueued` reads (accepted.ts), here for the same reason. */
  readonly acceptedAt: number;
  /** Its position in its class's heap of everyone's queued places by acceptance (accepted.ts), -1 when out. */
  inAll: number;
  /** Its position in its principal's backlog's heap by acceptance (accepted.ts), -1 when out. */
  inOwn: number;

  constructor(
    readonly message: StoredMessage,
    readonly rank: number,
    readonly tag: number,
  ) {
    this.seq = message.seq;
    this.where = Place.READY;
    // A scheduled message joins the queue when due: its wait in the queue starts then.
    this.acceptedAt = message.sendAt ?? message.createdAt;
    this.inAll = -1;
    this.inOwn = -1;
  }

  /** Whether its message is still queued under this place (else every reference to it is stale). */
  get queued(): boolean {
    return this.message.place === this;
  }
}

/** A stored delivery report. */
export interface StoredCallback {
  /** The report's id, as claims hand it out. */
  uid: string;
  /** Its message's ref. */
  ref: string;
  /** Creation order, the tie-break after the next attempt's time. */
  seq: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  /** The report's state: the very object its message record holds, so the two never differ. */
  state: CallbackState;
  /** Counts its leases and attempts, so a due-queue entry made before the last one is known stale. */
  version: number;
}

/** Whether a lease ending at `leaseUntil` still holds at `now`. */
export function leaseIsLive(leaseUntil: number | null, now: number): boolean {
  return leaseUntil !== null && leaseUntil > now;
}

function copyOutcome(outcome: Outcome | null): Outcome | null {
  return outcome === null ? null : { ...outcome };
}

function copyParts(parts: readonly PartRecord[]): PartRecord[] {
  return parts.map((part) => ({ index: part.index, carrierId: part.carrierId, outcome: copyOutcome(part.outcome) }));
}

/**
 * A copy of `record` the caller may change, without the store's own fields. Field by field
 * rather than by spread: every record then shares one object shape, the copy is several
 * times cheaper (it runs for every claim and every transition), and a stored message's own
 * fields (lease, seq) stay inside.
 */
export function copyRecord(record: MessageRecord): MessageRecord {
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
    priority: record.priority,
    state: record.state,
    statusReason: record.statusReason,
    statusDescription: record.statusDescription,
    attempts: record.attempts,
    lastError: record.lastError,
    updatedAt: record.updatedAt,
    parts: copyParts(record.parts),
    callback: record.callback === null ? null : { ...record.callback },
    sendAt: record.sendAt ?? null,
    validUntil: record.validUntil ?? null,
    traceparent: record.traceparent,
  };
}

/**
 * Receipt outcomes already stored, so that the parts given equal outcomes share one frozen
 * object instead of keeping a copy each. Carriers send few distinct outcomes (a state, a
 * reason, a short text), so a short list covers them; an outcome not in it when it is full
 * is kept as a copy of its own. Stored outcomes are never changed: reads copy them out.
 */
export class SharedOutcomes {
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

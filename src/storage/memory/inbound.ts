/**
 * The memory storage's inbound part ({@link InboundStorage}): MO messages with their
 * webhooks, and the opt-out list, in plain Maps. Inbound traffic is a trickle beside the
 * outbound, so claims scan the pending webhooks rather than keep a due queue; a purge takes
 * the finished ones by age, as it runs over everything retained.
 *
 * @module
 */
import { MinHeap } from '../../util/min-heap.js';
import { eraseInbound } from '../../lifecycle/erase-record.js';
import type { CallbackAttempt, CallbackState, ClaimOptions } from '../contract.js';
import { statesOf, type CallbackListQuery, type ReplaySelection } from '../callback-list.js';
import { isAfter } from '../message-list.js';
import { matchesInboundFilter, type InboundRecoveryStorage } from '../inbound-recovery.js';
import type {
  DueInbound,
  InboundInsertOptions,
  InboundPart,
  InboundRecord,
  InboundStorage,
  InboundWebhookPage,
  NewInbound,
  OptOutEntry,
  OptOutKey,
} from '../inbound-record.js';

/** An inbound message as kept here, with its webhook's lease. */
interface StoredInbound {
  record: InboundRecord;
  seq: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
}

/** The key of an opt-out entry in the map: short code and number cannot contain a newline. */
function optOutKey(key: OptOutKey): string {
  return `${key.shortCode}\n${key.number}`;
}

/** A copy of `record` that a caller may change without changing what is stored. */
function copyInbound(record: InboundRecord): InboundRecord {
  return { ...record, callback: record.callback === null ? null : { ...record.callback } };
}

const receivedFirst = (a: StoredInbound, b: StoredInbound): boolean =>
  a.record.receivedAt < b.record.receivedAt || (a.record.receivedAt === b.record.receivedAt && a.seq < b.seq);

/** Inbound messages and opt-outs in this process's memory. */
export class MemoryInbound implements InboundStorage, InboundRecoveryStorage {
  readonly #byRef = new Map<string, StoredInbound>();
  readonly #byUid = new Map<string, StoredInbound>();
  /** Webhooks still pending, which claims scan. */
  readonly #pending = new Set<StoredInbound>();
  /** Messages whose webhook is not pending (none, or finished), by receipt: what a purge may take, oldest first. */
  readonly #purgeable = new MinHeap<StoredInbound>(receivedFirst);
  readonly #optOuts = new Map<string, OptOutEntry>();
  /** Per sender and recipient, the newest message's redelivery key and arrival ({@link InboundInsertOptions.once}). */
  readonly #newest = new Map<string, { onceKey: string | null; receivedAt: number; seq: number }>();
  /** The parts of long messages, by message key, then part number. */
  readonly #parts = new Map<string, Map<number, InboundPart>>();
  /** Per principal, the messages whose webhook is pending or failed: what a webhook list reads. */
  readonly #open = new Map<string, Set<StoredInbound>>();
  #seq = 0;

  /** Stores the message (and its webhook, due at once) and applies the opt-out change, unless it repeats the newest. */
  async insertInbound(message: NewInbound, options: InboundInsertOptions = {}): Promise<{ optOutChanged: boolean; duplicate?: true }> {
    if (this.#byRef.has(message.ref)) throw new Error(`MemoryStorage: inbound ref ${JSON.stringify(message.ref)} already exists`);
    const conversation = optOutKey({ shortCode: message.to, number: message.from });
    const newest = this.#newest.get(conversation);
    const once = options.once;
    if (once !== undefined && newest !== undefined && newest.onceKey === once.key && newest.receivedAt >= once.since) {
      return { optOutChanged: false, duplicate: true };
    }
    const withHook = message.callbackUrl !== null && message.uid !== null;
    const callback: CallbackState | null = withHook
      ? { state: 'pending', attempts: 0, lastStatusCode: null, lastError: null, nextAttemptAt: message.receivedAt }
      : null;
    const stored: StoredInbound = {
      record: { ...message, callback },
      seq: this.#seq++,
      leaseOwner: options.lease?.owner ?? null,
      leaseUntil: options.lease?.until ?? null,
    };
    this.#byRef.set(message.ref, stored);
    if (newest === undefined || message.receivedAt >= newest.receivedAt) {
      this.#newest.set(conversation, { onceKey: once?.key ?? null, receivedAt: message.receivedAt, seq: stored.seq });
    }
    if (withHook) {
      this.#byUid.set(message.uid!, stored);
      this.#pending.add(stored);
      this.#openSet(stored, true);
    } else this.#purgeable.push(stored);
    const optOutChanged =
      options.optOut === undefined ? false : this.#set({ shortCode: message.to, number: message.from }, options.optOut, message.receivedAt);
    return { optOutChanged };
  }

  /** Stores (or replaces) one part of a long message and returns every part stored under its key, in order. */
  async storeInboundPart(part: InboundPart): Promise<InboundPart[]> {
    let parts = this.#parts.get(part.key);
    if (parts === undefined) this.#parts.set(part.key, (parts = new Map()));
    parts.set(part.seq, { ...part });
    return [...parts.values()].sort((a, b) => a.seq - b.seq).map((p) => ({ ...p }));
  }

  /** Leases up to `limit` due pending webhooks, oldest due first. */
  async claimInbound(options: ClaimOptions): Promise<DueInbound[]> {
    const due = [...this.#pending]
      .filter((s) => (s.record.callback!.nextAttemptAt ?? 0) <= options.now && (s.leaseUntil === null || s.leaseUntil <= options.now))
      .sort((a, b) => a.record.callback!.nextAttemptAt! - b.record.callback!.nextAttemptAt! || a.seq - b.seq)
      .slice(0, Math.max(0, options.limit));
    return due.map((s) => {
      s.leaseOwner = options.owner;
      s.leaseUntil = options.now + options.leaseMs;
      return { uid: s.record.uid!, attempts: s.record.callback!.attempts, inbound: copyInbound(s.record) };
    });
  }

  /** Makes claimed pending webhooks claimable again at `until`. */
  async deferInbound(uids: readonly string[], until: number): Promise<void> {
    for (const uid of uids) {
      const stored = this.#byUid.get(uid);
      if (stored !== undefined && this.#pending.has(stored)) stored.leaseUntil = until;
    }
  }

  /** Records one attempt and ends the lease; ignored once the webhook is finished. */
  async recordInboundAttempt(uid: string, attempt: CallbackAttempt): Promise<void> {
    const stored = this.#byUid.get(uid);
    if (stored === undefined || !this.#pending.has(stored)) return;
    const state = stored.record.callback!;
    state.attempts++;
    state.lastStatusCode = attempt.statusCode;
    state.lastError = attempt.error;
    stored.leaseOwner = null;
    stored.leaseUntil = null;
    if (attempt.result === 'retry') {
      state.nextAttemptAt = attempt.nextAttemptAt ?? attempt.now;
      return;
    }
    state.state = attempt.result;
    state.nextAttemptAt = null;
    this.#pending.delete(stored);
    this.#purgeable.push(stored);
    if (attempt.result === 'delivered') this.#openSet(stored, false);
  }

  /** Adds `stored` to (or takes it off) its principal's open webhooks. */
  #openSet(stored: StoredInbound, open: boolean): void {
    const principalId = stored.record.principalId;
    if (principalId === null) return;
    let set = this.#open.get(principalId);
    if (open) {
      if (set === undefined) this.#open.set(principalId, (set = new Set()));
      set.add(stored);
    } else if (set !== undefined) {
      set.delete(stored);
      if (set.size === 0) this.#open.delete(principalId);
    }
  }

  /** The principal's open webhooks that `query` asks for, newest arrival first (a scan of that principal's open ones only). */
  #openOf(query: CallbackListQuery): StoredInbound[] {
    const states = statesOf(query);
    const { after } = query;
    return [...(this.#open.get(query.principalId) ?? [])]
      .filter((s) => matchesInboundFilter(s.record, query, states) && (after === undefined || isAfter({ createdAt: s.record.receivedAt, seq: s.seq }, after)))
      .sort((a, b) => b.record.receivedAt - a.record.receivedAt || b.seq - a.seq);
  }

  /** One page of the principal's pending or failed webhooks, newest arrival first. */
  async listInboundWebhooks(query: CallbackListQuery): Promise<InboundWebhookPage> {
    const matching = this.#openOf(query);
    const page = matching.slice(0, Math.max(0, query.limit));
    const last = page.at(-1);
    return {
      inbound: page.map((s) => copyInbound(s.record)),
      next: last === undefined || matching.length <= page.length ? null : { createdAt: last.record.receivedAt, seq: last.seq },
    };
  }

  /** Makes the principal's failed webhooks `selection` names pending and due at `now`; how many. */
  async replayInboundWebhooks(selection: ReplaySelection, now: number): Promise<number> {
    const named =
      'refs' in selection
        ? [...new Set(selection.refs)].map((ref) => this.#byRef.get(ref)).filter((s) => s !== undefined)
        : this.#openOf({ ...selection, states: ['failed'], limit: Infinity });
    let replayed = 0;
    for (const stored of named) {
      const callback = stored.record.callback;
      if (stored.record.principalId !== selection.principalId || callback?.state !== 'failed') continue;
      stored.record.callback = { ...callback, state: 'pending', nextAttemptAt: now, restartedAfter: callback.attempts };
      stored.leaseOwner = null;
      stored.leaseUntil = null;
      this.#pending.add(stored);
      replayed++;
    }
    return replayed;
  }

  /** Inbound messages, newest first. */
  async listInbound(options: { principalId?: string; limit: number }): Promise<InboundRecord[]> {
    const all = [...this.#byRef.values()].filter((s) => options.principalId === undefined || s.record.principalId === options.principalId);
    all.sort((a, b) => b.record.receivedAt - a.record.receivedAt || b.seq - a.seq);
    return all.slice(0, Math.max(0, options.limit)).map((s) => copyInbound(s.record));
  }

  /** Deletes up to `limit` messages received before `before` whose webhook is not pending, oldest first. */
  async purgeInbound(before: number, limit: number): Promise<number> {
    let deleted = 0;
    while (deleted < limit) {
      const oldest = this.#purgeable.peek();
      if (oldest === undefined || oldest.record.receivedAt >= before) break;
      this.#purgeable.pop();
      // A replayed webhook is pending again (and pushed anew when it ends), or already gone.
      if (this.#pending.has(oldest) || this.#byRef.get(oldest.record.ref) !== oldest) continue;
      this.#openSet(oldest, false);
      this.#byRef.delete(oldest.record.ref);
      if (oldest.record.uid !== null) this.#byUid.delete(oldest.record.uid);
      const conversation = optOutKey({ shortCode: oldest.record.to, number: oldest.record.from });
      if (this.#newest.get(conversation)?.seq === oldest.seq) this.#newest.delete(conversation);
      deleted++;
    }
    for (const [key, parts] of this.#parts) {
      for (const [seq, part] of parts) if (part.receivedAt < before) parts.delete(seq);
      if (parts.size === 0) this.#parts.delete(key);
    }
    return deleted;
  }

  /** See `EraseStorage.eraseInbound`: the messages from `from` not yet erased, and the redelivery keys of its conversations. */
  async eraseInbound(from: string, limit: number): Promise<number> {
    let erased = 0;
    for (const stored of this.#byRef.values()) {
      if (erased >= limit) break;
      if (stored.record.from !== from) continue;
      const conversation = optOutKey({ shortCode: stored.record.to, number: from });
      this.#newest.delete(conversation);
      const record = { ...stored.record };
      eraseInbound(record);
      stored.record = record;
      erased++;
    }
    return erased;
  }

  /** Opts a number out of a short code, or back in; whether the list changed. */
  async setOptOut(key: OptOutKey, optedOut: boolean, at: number): Promise<boolean> {
    return this.#set(key, optedOut, at);
  }

  /** Whether each key's number is opted out of its short code. */
  async findOptOuts(keys: readonly OptOutKey[]): Promise<boolean[]> {
    return keys.map((key) => this.#optOuts.has(optOutKey(key)));
  }

  /** The list, by short code then number, from after `after`. */
  async listOptOuts(options: { shortCode?: string; limit: number; after?: OptOutKey }): Promise<OptOutEntry[]> {
    const { shortCode, after } = options;
    const entries = [...this.#optOuts.values()]
      .filter((e) => shortCode === undefined || e.shortCode === shortCode)
      .filter((e) => after === undefined || e.shortCode > after.shortCode || (e.shortCode === after.shortCode && e.number > after.number))
      .sort((a, b) => (a.shortCode === b.shortCode ? compare(a.number, b.number) : compare(a.shortCode, b.shortCode)));
    return entries.slice(0, Math.max(0, options.limit)).map((e) => ({ ...e }));
  }

  #set(key: OptOutKey, optedOut: boolean, at: number): boolean {
    const k = optOutKey(key);
    if (!optedOut) return this.#optOuts.delete(k);
    if (this.#optOuts.has(k)) return false;
    this.#optOuts.set(k, { shortCode: key.shortCode, number: key.number, createdAt: at });
    return true;
  }
}

/** Code-unit order, as the SQL adapters' binary collation sorts. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

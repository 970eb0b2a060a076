/**
 * The memory store's inbound rows ({@link InboundStore}): MO messages with their webhooks,
 * and the opt-out list, in plain Maps. Inbound traffic is a trickle beside the outbound, so
 * claims scan the pending webhooks rather than keep a due queue; a purge takes the finished
 * ones by age, as it runs over everything retained.
 *
 * @module
 */
import { MinHeap } from '../../util/min-heap.js';
import type { ErasableInbound } from '../../lifecycle/erase-record.js';
import type { ClaimOptions } from '../claim-options.js';
import { statesOf, type CallbackListQuery } from '../callback-list.js';
import { isAfter } from '../message-list.js';
import type { InboundInsertOptions, InboundPart, InboundRecord, InboundStorage, OptOutEntry, OptOutKey } from '../inbound-record.js';
import type { InboundRow, InboundStore, InboundWrite } from '../inbound-store.js';

/** An inbound message as kept here, with its webhook's lease. */
interface StoredInbound {
  record: InboundRecord;
  seq: number;
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

/** Newest arrival first, then the latest inserted. */
const newestFirst = (a: StoredInbound, b: StoredInbound): number => b.record.receivedAt - a.record.receivedAt || b.seq - a.seq;

/** Inbound messages and opt-outs in this process's memory. */
export class MemoryInbound implements InboundStore {
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

  /** See {@link InboundStore.insert}. */
  async insert(record: InboundRecord, options: InboundInsertOptions): Promise<{ optOutChanged: boolean; duplicate?: true }> {
    if (this.#byRef.has(record.ref)) throw new Error(`MemoryStorage: inbound ref ${JSON.stringify(record.ref)} already exists`);
    const conversation = optOutKey({ shortCode: record.to, number: record.from });
    const newest = this.#newest.get(conversation);
    const once = options.once;
    if (once !== undefined && newest !== undefined && newest.onceKey === once.key && newest.receivedAt >= once.since) {
      return { optOutChanged: false, duplicate: true };
    }
    const stored: StoredInbound = { record: copyInbound(record), seq: this.#seq++, leaseUntil: options.lease?.until ?? null };
    this.#byRef.set(record.ref, stored);
    if (newest === undefined || record.receivedAt >= newest.receivedAt) {
      this.#newest.set(conversation, { onceKey: once?.key ?? null, receivedAt: record.receivedAt, seq: stored.seq });
    }
    if (record.uid !== null) this.#byUid.set(record.uid, stored);
    this.#index(stored, true);
    const optOutChanged = options.optOut === undefined ? false : this.#set({ shortCode: record.to, number: record.from }, options.optOut, record.receivedAt);
    return { optOutChanged };
  }

  /** Files `stored` under its webhook's state: pending (claims), open (lists), or purgeable once it left pending (or had no webhook). */
  #index(stored: StoredInbound, inserted: boolean): void {
    const state = stored.record.callback?.state;
    if (state === 'pending') this.#pending.add(stored);
    else if (this.#pending.delete(stored) || inserted) this.#purgeable.push(stored);
    this.#openSet(stored, state === 'pending' || state === 'failed');
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

  /** See {@link InboundStorage.storeInboundPart}. */
  async storeInboundPart(part: InboundPart): Promise<InboundPart[]> {
    let parts = this.#parts.get(part.key);
    if (parts === undefined) this.#parts.set(part.key, (parts = new Map()));
    parts.set(part.seq, { ...part });
    return [...parts.values()].sort((a, b) => a.seq - b.seq).map((p) => ({ ...p }));
  }

  /** See {@link InboundStore.claim}. */
  async claim(options: ClaimOptions): Promise<InboundRecord[]> {
    const due = [...this.#pending]
      .filter((s) => (s.record.callback!.nextAttemptAt ?? 0) <= options.now && (s.leaseUntil === null || s.leaseUntil <= options.now))
      .sort((a, b) => a.record.callback!.nextAttemptAt! - b.record.callback!.nextAttemptAt! || a.seq - b.seq)
      .slice(0, Math.max(0, options.limit));
    return due.map((s) => {
      s.leaseUntil = options.now + options.leaseMs;
      return copyInbound(s.record);
    });
  }

  /** See {@link InboundStorage.deferInbound}. */
  async deferInbound(uids: readonly string[], until: number): Promise<void> {
    for (const uid of uids) {
      const stored = this.#byUid.get(uid);
      if (stored !== undefined) stored.leaseUntil = until;
    }
  }

  /** See {@link InboundStore.find}. */
  async find(key: 'ref' | 'uid', values: readonly string[]): Promise<InboundRecord[]> {
    const index = key === 'ref' ? this.#byRef : this.#byUid;
    return values.flatMap((value) => {
      const stored = index.get(value);
      return stored === undefined ? [] : [copyInbound(stored.record)];
    });
  }

  /** See {@link InboundStore.write}. */
  async write(writes: readonly InboundWrite[]): Promise<boolean[]> {
    return writes.map(({ uid, callback, expected }) => {
      const stored = this.#byUid.get(uid);
      const current = stored?.record.callback;
      if (stored === undefined || current?.state !== expected.state || current.attempts !== expected.attempts) return false;
      stored.record = { ...stored.record, callback: { ...callback } };
      stored.leaseUntil = null;
      this.#index(stored, false);
      return true;
    });
  }

  /** See {@link InboundStore.listWebhooks}: a scan of that principal's open webhooks only. */
  async listWebhooks(query: CallbackListQuery): Promise<InboundRow[]> {
    const states: readonly string[] = statesOf(query);
    const { since, until, after } = query;
    const matches = ({ record, seq }: StoredInbound): boolean =>
      states.includes(record.callback!.state) &&
      (since === undefined || record.receivedAt >= since) &&
      (until === undefined || record.receivedAt < until) &&
      (after === undefined || isAfter({ createdAt: record.receivedAt, seq }, after));
    return [...(this.#open.get(query.principalId) ?? [])]
      .filter(matches)
      .sort(newestFirst)
      .slice(0, Math.max(0, query.limit))
      .map(({ record, seq }) => ({ record: copyInbound(record), seq }));
  }

  /** See {@link InboundStorage.listInbound}. */
  async listInbound(options: { principalId?: string; limit: number }): Promise<InboundRecord[]> {
    const all = [...this.#byRef.values()].filter((s) => options.principalId === undefined || s.record.principalId === options.principalId);
    return all.sort(newestFirst).slice(0, Math.max(0, options.limit)).map((s) => copyInbound(s.record));
  }

  /** See {@link InboundStorage.purgeInbound}: messages oldest first. */
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

  /** See {@link InboundStore.erase}: the messages from `from` not yet erased, and the redelivery keys of its conversations. */
  async erase(from: string, limit: number, erased: ErasableInbound): Promise<number> {
    let count = 0;
    for (const stored of this.#byRef.values()) {
      if (count >= limit) break;
      if (stored.record.from !== from) continue;
      this.#newest.delete(optOutKey({ shortCode: stored.record.to, number: from }));
      stored.record = { ...stored.record, from: erased.from, text: erased.text };
      count++;
    }
    return count;
  }

  /** See {@link InboundStorage.setOptOut}. */
  async setOptOut(key: OptOutKey, optedOut: boolean, at: number): Promise<boolean> {
    return this.#set(key, optedOut, at);
  }

  /** See {@link InboundStorage.findOptOuts}. */
  async findOptOuts(keys: readonly OptOutKey[]): Promise<boolean[]> {
    return keys.map((key) => this.#optOuts.has(optOutKey(key)));
  }

  /** See {@link InboundStorage.listOptOuts}: by short code then number, from after `after`. */
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

/**
 * The memory record store's index of the message list ({@link ListIndex}): each principal's
 * rows in list order, and the same per state, recipient, profile and report state (pending
 * or failed, for report recovery's list), so that a page walks the narrowest of them from its
 * start and stops when it is full, whatever the number of rows stored. By external id it
 * reads the store's own lookup (lookups.ts): an external id names few messages, so a second
 * sorted list per id would cost every insert for nothing.
 *
 * @module
 */
import { openCallbackState, statesOf, type CallbackListQuery } from '../callback-list.js';
import { isAfter, matchesFilter, type ListPosition, type MessageListQuery } from '../message-list.js';
import type { MessageRow } from '../record-store.js';
import type { ExternalIdIndex } from './lookups.js';
import type { Slot } from './slot.js';
import { SortedSlots } from './sorted-slots.js';

/**
 * The fields a list filters by beside the principal, each with the record field it reads;
 * `null`: the row is on none of that field's lists (a report not pending nor failed).
 */
const KEYED: Record<'state' | 'recipient' | 'profileCode' | 'callback', (slot: Slot | MessageRow) => string | null> = {
  state: (slot) => slot.record.state,
  recipient: (slot) => slot.record.recipient,
  profileCode: (slot) => slot.record.profileCode,
  callback: (slot) => openCallbackState(slot.record),
};

type Key = keyof typeof KEYED;
const KEYS = Object.keys(KEYED) as Key[];

/** principalId -> value -> the rows; two maps, so no pair of texts needs a separator. */
type ByValue = Map<string, Map<string, SortedSlots>>;

/** The rows by principal, and by principal and each filtered field, in list order. */
export class ListIndex {
  readonly #byPrincipal = new Map<string, SortedSlots>();
  readonly #byKey: Record<Key, ByValue> = { state: new Map(), recipient: new Map(), profileCode: new Map(), callback: new Map() };
  readonly #externalIds: ExternalIdIndex;

  /** `externalIds`: the store's lookup by external id, which the list reads for that filter. */
  constructor(externalIds: ExternalIdIndex) {
    this.#externalIds = externalIds;
  }

  /**
   * What a write of `after` over the row `before` holds moves in this index: `'all'` when its
   * principal or place changes, else the lists whose value changes (a state change moves the
   * row in its state's lists only), `null` for none.
   */
  static changes(before: Slot, after: MessageRow): 'all' | Key[] | null {
    if (before.record.principalId !== after.record.principalId || before.record.createdAt !== after.record.createdAt) return 'all';
    // Most writes move nothing here: no list is built for them.
    let moved: Key[] | null = null;
    for (const key of KEYS) if (KEYED[key](before) !== KEYED[key](after)) (moved ??= []).push(key);
    return moved;
  }

  /** Lists `slot` under its row's principal and values (`keys`: under those values only, already listed under the rest). */
  add(slot: Slot, keys: 'all' | readonly Key[] = 'all'): void {
    const principalId = slot.record.principalId;
    if (keys === 'all') {
      let own = this.#byPrincipal.get(principalId);
      if (own === undefined) this.#byPrincipal.set(principalId, (own = new SortedSlots()));
      own.add(slot);
    }
    for (const key of keys === 'all' ? KEYS : keys) {
      const value = KEYED[key](slot);
      if (value === null) continue;
      const byValue = this.#byKey[key];
      let ofPrincipal = byValue.get(principalId);
      if (ofPrincipal === undefined) byValue.set(principalId, (ofPrincipal = new Map()));
      let slots = ofPrincipal.get(value);
      if (slots === undefined) ofPrincipal.set(value, (slots = new SortedSlots()));
      slots.add(slot);
    }
  }

  /** Stops listing `slot` (under the principal and values it was added with; `keys`: under those values only). */
  remove(slot: Slot, keys: 'all' | readonly Key[] = 'all'): void {
    const principalId = slot.record.principalId;
    if (keys === 'all') {
      const own = this.#byPrincipal.get(principalId);
      if (own === undefined) return;
      own.remove(slot);
      if (own.size === 0) this.#byPrincipal.delete(principalId);
    }
    for (const key of keys === 'all' ? KEYS : keys) {
      const ofPrincipal = this.#byKey[key].get(principalId);
      const value = KEYED[key](slot);
      const slots = value === null ? undefined : ofPrincipal?.get(value);
      if (ofPrincipal === undefined || slots === undefined || value === null) continue;
      slots.remove(slot);
      if (slots.size === 0) ofPrincipal.delete(value);
      if (ofPrincipal.size === 0) this.#byKey[key].delete(principalId);
    }
  }

  /** The page of rows `query` asks for: the narrowest list its filters name, walked from its start. */
  list(query: MessageListQuery): MessageRow[] {
    const limit = Math.max(0, Math.floor(query.limit));
    const out: MessageRow[] = [];
    if (limit === 0) return out;
    for (const slot of this.#candidates(query)) {
      if (query.until !== undefined && slot.record.createdAt >= query.until) continue;
      // Newest first: once older than `since`, every later slot is too.
      if (query.since !== undefined && slot.record.createdAt < query.since) break;
      if (!matchesFilter(slot.record, query)) continue;
      out.push(slot.row());
      if (out.length === limit) break;
    }
    return out;
  }

  /** The page of rows a callback list asks for: its states' lists merged, walked from the page's start. */
  listCallbacks(query: CallbackListQuery): MessageRow[] {
    const limit = Math.max(0, Math.floor(query.limit));
    const out: MessageRow[] = [];
    if (limit === 0) return out;
    const after = startOf(query);
    const lists = statesOf(query).map((state) => this.#byKey.callback.get(query.principalId)?.get(state)?.newestFirst(after) ?? []);
    for (const slot of mergeNewestFirst(lists)) {
      if (query.since !== undefined && slot.record.createdAt < query.since) break;
      out.push(slot.row());
      if (out.length === limit) break;
    }
    return out;
  }

  /**
   * Up to `limit` rows to `recipient` of every principal, by principal id from `fromPrincipal`
   * on (included; `null`: the first), each principal's newest first.
   */
  byRecipient(recipient: string, fromPrincipal: string | null, limit: number): MessageRow[] {
    const out: MessageRow[] = [];
    const principals = [...this.#byKey.recipient.keys()].filter((id) => fromPrincipal === null || id >= fromPrincipal).sort();
    for (const principalId of principals) {
      for (const slot of this.#byKey.recipient.get(principalId)?.get(recipient)?.newestFirst() ?? []) {
        if (out.length === limit) return out;
        out.push(slot.row());
      }
    }
    return out;
  }

  /** The slots that may match `query`, newest first from its start: those of its most selective filter. */
  #candidates(query: MessageListQuery): Iterable<Slot> {
    const { principalId } = query;
    const after = startOf(query);
    const single = (key: Key, value: string) => this.#byKey[key].get(principalId)?.get(value)?.newestFirst(after) ?? [];
    if (query.externalId !== undefined) {
      const slots = this.#externalIds.slots(principalId, query.externalId);
      return after === undefined ? slots : slots.filter((slot) => isAfter({ createdAt: slot.record.createdAt, seq: slot.seq }, after));
    }
    if (query.recipient !== undefined) return single('recipient', query.recipient);
    const states = query.states ?? [];
    if (states.length > 0) return mergeNewestFirst([...new Set(states)].map((state) => single('state', state)));
    if (query.profileCode !== undefined) return single('profileCode', query.profileCode);
    return this.#byPrincipal.get(principalId)?.newestFirst(after) ?? [];
  }
}

/** Where a page starts: after the older of its cursor and its `until` (every row before `until` is older than it). */
function startOf(query: { after?: ListPosition; until?: number }): ListPosition | undefined {
  const bound = query.until === undefined ? undefined : { createdAt: query.until, seq: -1 };
  return query.after === undefined ? bound : bound === undefined || isAfter(query.after, bound) ? query.after : bound;
}

/** The slots of several lists (each newest first, none shared), merged newest first. */
function* mergeNewestFirst(lists: Iterable<Slot>[]): Generator<Slot, void, undefined> {
  const heads = lists.map((list) => list[Symbol.iterator]());
  const current = heads.map((it) => it.next());
  for (;;) {
    let best = -1;
    for (let i = 0; i < current.length; i++) {
      const item = current[i]!;
      if (item.done === true) continue;
      if (best === -1) best = i;
      else {
        const a = item.value;
        const b = (current[best] as IteratorYieldResult<Slot>).value;
        if (a.record.createdAt > b.record.createdAt || (a.record.createdAt === b.record.createdAt && a.seq > b.seq)) best = i;
      }
    }
    if (best === -1) return;
    yield (current[best] as IteratorYieldResult<Slot>).value;
    current[best] = heads[best]!.next();
  }
}

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
import type { MessageRecord } from '../message-record.js';
import type { MessageRow } from '../record-store.js';
import type { ExternalIdIndex } from './lookups.js';
import { newestLast, type Slot } from './slot.js';
import { SlotGroups, type Place, type SortedSlots } from './sorted-slots.js';

/** A principal's rows in list order, all of them or by the value `valueOf` reads (`null`: on none of its lists). */
function lists(valueOf?: (row: Slot | MessageRow) => string | null): SlotGroups<string> {
  return new SlotGroups({
    order: newestLast,
    key: (slot) => (valueOf?.(slot) === null ? null : slot.record.principalId),
    subKey: valueOf,
    moves: (slot, after) =>
      slot.record.principalId !== after.record.principalId ||
      slot.record.createdAt !== after.record.createdAt ||
      (valueOf !== undefined && valueOf(slot) !== valueOf(after)),
  });
}

/** The rows by principal, and by principal and each filtered field, in list order. */
export class ListIndex {
  readonly #all = lists();
  readonly #byState = lists((row) => row.record.state);
  readonly #byRecipient = lists((row) => row.record.recipient);
  readonly #byProfile = lists((row) => row.record.profileCode);
  /** By report state: pending or failed, for report recovery's list. */
  readonly #byCallback = lists((row) => openCallbackState(row.record));
  /** The lists, for the store to keep up. */
  readonly indexes = [this.#all, this.#byState, this.#byRecipient, this.#byProfile, this.#byCallback];

  /** `externalIds`: the store's lookup by external id, which the list reads for that filter. */
  constructor(private readonly externalIds: ExternalIdIndex) {}

  /** The page of rows `query` asks for: the narrowest list its filters name, walked from its start. */
  list(query: MessageListQuery): MessageRow[] {
    return page(this.#candidates(query), query, (record) => matchesFilter(record, query));
  }

  /** The page of rows a callback list asks for: its states' lists merged, walked from the page's start. */
  listCallbacks(query: CallbackListQuery): MessageRow[] {
    const after = startOf(query);
    return page(mergeNewestFirst(statesOf(query).map((state) => newestFirst(this.#byCallback.get(query.principalId, state), after))), query);
  }

  /**
   * Up to `limit` rows to `recipient` of every principal, by principal id from `fromPrincipal`
   * on (included; `null`: the first), each principal's newest first.
   */
  byRecipient(recipient: string, fromPrincipal: string | null, limit: number): MessageRow[] {
    const principals = [...this.#byRecipient.keys()].filter((id) => fromPrincipal === null || id >= fromPrincipal).sort();
    return page(chain(principals.map((id) => newestFirst(this.#byRecipient.get(id, recipient)))), { limit });
  }

  /** The slots that may match `query`, newest first from its start: those of its most selective filter. */
  #candidates(query: MessageListQuery): Iterable<Slot> {
    const { principalId } = query;
    const after = startOf(query);
    if (query.externalId !== undefined) {
      const slots = this.externalIds.slots(principalId, query.externalId);
      return after === undefined ? slots : slots.filter((slot) => isAfter({ createdAt: slot.record.createdAt, seq: slot.seq }, after));
    }
    if (query.recipient !== undefined) return newestFirst(this.#byRecipient.get(principalId, query.recipient), after);
    const states = query.states ?? [];
    if (states.length > 0) return mergeNewestFirst([...new Set(states)].map((state) => newestFirst(this.#byState.get(principalId, state), after)));
    if (query.profileCode !== undefined) return newestFirst(this.#byProfile.get(principalId, query.profileCode), after);
    return newestFirst(this.#all.get(principalId), after);
  }
}

/** The slots of `list` newest first, starting strictly after (older than) `after` when given. */
function newestFirst(list: SortedSlots | undefined, after?: ListPosition): Iterable<Slot> {
  if (list === undefined) return [];
  return after === undefined ? list.backFrom() : list.backFrom(againstPosition, after);
}

/** Where `slot` is against `at` in list order (see {@link Place}). */
const againstPosition: Place<ListPosition> = (slot, at) => slot.record.createdAt - at.createdAt || slot.seq - at.seq;

/** Where a page starts: after the older of its cursor and its `until` (every row before `until` is older than it). */
function startOf(query: { after?: ListPosition; until?: number }): ListPosition | undefined {
  const bound = query.until === undefined ? undefined : { createdAt: query.until, seq: -1 };
  return query.after === undefined ? bound : bound === undefined || isAfter(query.after, bound) ? query.after : bound;
}

/** Up to `query.limit` rows of `slots` (newest first from the page's start) that `matches` keeps, down to `query.since`. */
function page(slots: Iterable<Slot>, query: { since?: number; limit: number }, matches = (_record: MessageRecord) => true): MessageRow[] {
  const limit = Math.max(0, Math.floor(query.limit));
  const out: MessageRow[] = [];
  for (const slot of limit === 0 ? [] : slots) {
    // Newest first: once older than `since`, every later slot is too.
    if (query.since !== undefined && slot.record.createdAt < query.since) break;
    if (!matches(slot.record)) continue;
    if (out.push(slot.row()) === limit) break;
  }
  return out;
}

/** The slots of several lists, one list after the other. */
function* chain(lists: Iterable<Slot>[]): Generator<Slot, void, undefined> {
  for (const list of lists) yield* list;
}

/** The slots of several lists (each newest first, none shared), merged newest first. */
function* mergeNewestFirst(lists: Iterable<Slot>[]): Generator<Slot, void, undefined> {
  const walks = lists.map((list) => list[Symbol.iterator]());
  const heads = walks.map((walk) => walk.next().value as Slot | undefined);
  for (;;) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) if (heads[i] !== undefined && (best === -1 || newestLast(heads[i]!, heads[best]!) > 0)) best = i;
    if (best === -1) return;
    yield heads[best]!;
    heads[best] = walks[best]!.next().value as Slot | undefined;
  }
}

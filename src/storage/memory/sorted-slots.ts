/**
 * The ordered index every order of the memory record store is kept in: {@link SortedSlots},
 * slots in one order, in buckets of bounded size, so that an insert or a removal anywhere
 * moves at most a bucket's entries and a walk starts at any place by binary search; and
 * {@link SlotGroups}, such lists per group of rows, kept up as the rows change.
 *
 * @module
 */
import type { MessageRow } from '../record-store.js';
import type { Slot } from './slot.js';

/** Most slots in one bucket before it is split in two. */
const BUCKET = 512;

/** How two slots are ordered: negative when `a` comes first. A total order: its last tie-break is `seq`. */
export type SlotOrder = (a: Slot, b: Slot) => number;

/**
 * Where a slot is against a place `at` in an order: negative when it comes before it (a
 * prefix of the order), else not. A function of the place rather than a closure over it: a
 * search runs at every add and removal.
 */
export type Place<P> = (slot: Slot, at: P) => number;

/**
 * Slots in one order. A slot is found by its place, so the fields its order reads must not
 * change while it is held: it is taken out before they change, and put back after.
 */
export class SortedSlots {
  /** Non-empty buckets, each in order, every slot of one before every slot of the next. */
  readonly #buckets: Slot[][] = [];
  #size = 0;

  constructor(private readonly order: SlotOrder) {}

  /** How many slots it holds. */
  get size(): number {
    return this.#size;
  }

  /** The first slot, or `undefined` when empty. */
  first(): Slot | undefined {
    return this.#buckets[0]?.[0];
  }

  /** The last slot, or `undefined` when empty. */
  last(): Slot | undefined {
    const bucket = this.#buckets[this.#buckets.length - 1];
    return bucket?.[bucket.length - 1];
  }

  /** Adds `slot` at its place (most often the end: most orders follow insertion). */
  add(slot: Slot): void {
    const buckets = this.#buckets;
    this.#size++;
    const last = buckets[buckets.length - 1];
    if (last === undefined) {
      buckets.push([slot]);
      return;
    }
    const isLast = this.order(last[last.length - 1]!, slot) < 0;
    const b = isLast ? buckets.length - 1 : this.#bucketAt(this.order, slot);
    const bucket = buckets[b]!;
    if (isLast) bucket.push(slot);
    else bucket.splice(indexAt(bucket, this.order, slot), 0, slot);
    if (bucket.length > BUCKET) buckets.splice(b + 1, 0, bucket.splice(BUCKET >>> 1));
  }

  /** Removes `slot` (placed with its fields as they are); nothing when it is not held. */
  remove(slot: Slot): void {
    // The first slot (a claim's, a wake's) is found without a search.
    const b = this.#buckets[0]?.[0] === slot ? 0 : this.#bucketAt(this.order, slot);
    const bucket = this.#buckets[b];
    if (bucket === undefined) return;
    const i = bucket[0] === slot ? 0 : indexAt(bucket, this.order, slot);
    if (bucket[i] !== slot) return;
    this.#size--;
    if (bucket.length === 1) this.#buckets.splice(b, 1);
    else if (i === 0) bucket.shift();
    else bucket.splice(i, 1);
  }

  /** The slots in order, from the first not before `at` by `place` (every slot when `place` is absent). */
  *from<P>(place?: Place<P>, at?: P): Generator<Slot, void, undefined> {
    const buckets = this.#buckets;
    let b = place === undefined ? 0 : this.#bucketAt(place, at!);
    let i = place === undefined || b === buckets.length ? 0 : indexAt(buckets[b]!, place, at!);
    for (; b < buckets.length; b++, i = 0) {
      const bucket = buckets[b]!;
      for (; i < bucket.length; i++) yield bucket[i]!;
    }
  }

  /** The slots in reverse order, from the last before `at` by `place` (every slot when `place` is absent). */
  *backFrom<P>(place?: Place<P>, at?: P): Generator<Slot, void, undefined> {
    const buckets = this.#buckets;
    let b = place === undefined ? buckets.length : this.#bucketAt(place, at!);
    // The first slot not before `at` is at (b, i); the walk starts just ahead of it.
    let i = b === buckets.length ? 0 : indexAt(buckets[b]!, place!, at!);
    for (; b >= 0; b--, i = buckets[b]?.length ?? 0) {
      const bucket = buckets[b];
      if (bucket !== undefined) for (i--; i >= 0; i--) yield bucket[i]!;
    }
  }

  /** Index of the first bucket whose last slot is not before `at` (`buckets.length` when none is). */
  #bucketAt<P>(place: Place<P>, at: P): number {
    let low = 0;
    let high = this.#buckets.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const bucket = this.#buckets[mid]!;
      if (place(bucket[bucket.length - 1]!, at) < 0) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/** Index in `bucket` of the first slot not before `at`. */
function indexAt<P>(bucket: readonly Slot[], place: Place<P>, at: P): number {
  let low = 0;
  let high = bucket.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (place(bucket[mid]!, at) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * One of the memory record store's indexes of its slots, which the store keeps up: it adds
 * a slot when stored, removes it when deleted, and around a write takes it out before its
 * row changes and puts it back after, when the write moves it there.
 */
export interface SlotIndex {
  /** Whether a write of `after` over the row `slot` holds moves the slot in this index. */
  moves(slot: Slot, after: MessageRow): boolean;
  /** Indexes `slot` as its row stands; it must be out of this index. */
  add(slot: Slot): void;
  /** Takes `slot` out of this index (its row still the one it was added with). */
  remove(slot: Slot): void;
}

/** How a {@link SlotGroups} groups and orders its slots. */
export interface Grouping<K> {
  /** The order within a group. */
  order: SlotOrder;
  /** The first key of the group of `slot`'s row; `null`: in no group. */
  key(slot: Slot): K | null;
  /** Its second key, when one key does not name the group (read only where `key` is not `null`). */
  subKey?(slot: Slot): string | null;
  /** See {@link SlotIndex.moves}: whether the write changes a field `key`, `subKey` or `order` reads. */
  moves(slot: Slot, after: MessageRow): boolean;
}

/**
 * Slots in groups named by one or two keys of their row (such as a principal, then a state),
 * each group a {@link SortedSlots}; a group exists while it holds a slot.
 */
export class SlotGroups<K> implements SlotIndex {
  readonly #groups = new Map<K, Map<string, SortedSlots>>();

  constructor(private readonly grouping: Grouping<K>) {}

  moves(slot: Slot, after: MessageRow): boolean {
    return this.grouping.moves(slot, after);
  }

  /** The first keys that have a group. */
  keys(): IterableIterator<K> {
    return this.#groups.keys();
  }

  /** The group of `key` (and `subKey`), if it holds a slot. */
  get(key: K, subKey = ''): SortedSlots | undefined {
    return this.#groups.get(key)?.get(subKey);
  }

  add(slot: Slot): void {
    const key = this.grouping.key(slot);
    if (key === null) return;
    const subKey = this.grouping.subKey?.(slot) ?? '';
    let byKey = this.#groups.get(key);
    if (byKey === undefined) this.#groups.set(key, (byKey = new Map()));
    let group = byKey.get(subKey);
    if (group === undefined) byKey.set(subKey, (group = new SortedSlots(this.grouping.order)));
    group.add(slot);
  }

  remove(slot: Slot): void {
    const key = this.grouping.key(slot);
    const byKey = key === null ? undefined : this.#groups.get(key);
    const subKey = this.grouping.subKey?.(slot) ?? '';
    const group = byKey?.get(subKey);
    if (group === undefined) return;
    group.remove(slot);
    if (group.size > 0) return;
    byKey!.delete(subKey);
    if (byKey!.size === 0) this.#groups.delete(key!);
  }
}

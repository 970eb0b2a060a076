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

/** Whether a slot comes before a place in an order: true for a prefix of the order, false from the place on. */
type Before = (slot: Slot) => boolean;

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

  /** Removes and returns the first slot; `undefined` when empty. */
  shift(): Slot | undefined {
    const slot = this.first();
    if (slot !== undefined) this.remove(slot);
    return slot;
  }

  /** Adds `slot` at its place (most often the end: most orders follow insertion). */
  add(slot: Slot): void {
    const buckets = this.#buckets;
    const before: Before = (other) => this.order(other, slot) < 0;
    this.#size++;
    const last = buckets[buckets.length - 1];
    if (last === undefined) {
      buckets.push([slot]);
      return;
    }
    const b = before(last[last.length - 1]!) ? buckets.length - 1 : this.#bucketAt(before);
    const bucket = buckets[b]!;
    bucket.splice(indexAt(bucket, before), 0, slot);
    if (bucket.length > BUCKET) buckets.splice(b + 1, 0, bucket.splice(BUCKET >>> 1));
  }

  /** Removes `slot` (placed with its fields as they are); nothing when it is not held. */
  remove(slot: Slot): void {
    const before: Before = (other) => this.order(other, slot) < 0;
    const b = this.#bucketAt(before);
    const bucket = this.#buckets[b];
    if (bucket === undefined) return;
    const i = indexAt(bucket, before);
    if (bucket[i] !== slot) return;
    this.#size--;
    if (bucket.length === 1) this.#buckets.splice(b, 1);
    else bucket.splice(i, 1);
  }

  /** The slots in order, from the first that `before` does not hold for (every slot when absent). */
  *from(before?: Before): Generator<Slot, void, undefined> {
    const buckets = this.#buckets;
    let b = before === undefined ? 0 : this.#bucketAt(before);
    let i = before === undefined || b === buckets.length ? 0 : indexAt(buckets[b]!, before);
    for (; b < buckets.length; b++, i = 0) {
      const bucket = buckets[b]!;
      for (; i < bucket.length; i++) yield bucket[i]!;
    }
  }

  /** The slots in reverse order, from the last that `before` holds for (every slot when absent). */
  *backFrom(before?: Before): Generator<Slot, void, undefined> {
    const buckets = this.#buckets;
    let b = before === undefined ? buckets.length : this.#bucketAt(before);
    // The first slot not before is at (b, i); the walk starts just ahead of it.
    let i = b === buckets.length ? 0 : indexAt(buckets[b]!, before!);
    for (; b >= 0; b--, i = buckets[b]?.length ?? 0) {
      const bucket = buckets[b];
      if (bucket !== undefined) for (i--; i >= 0; i--) yield bucket[i]!;
    }
  }

  /** Index of the first bucket whose last slot `before` does not hold for (`buckets.length` when none). */
  #bucketAt(before: Before): number {
    let low = 0;
    let high = this.#buckets.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const bucket = this.#buckets[mid]!;
      if (before(bucket[bucket.length - 1]!)) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/** Index in `bucket` of the first slot `before` does not hold for. */
function indexAt(bucket: readonly Slot[], before: Before): number {
  let low = 0;
  let high = bucket.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (before(bucket[mid]!)) low = mid + 1;
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
  /** Its second key, when one key does not name the group; `null`: in no group. */
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
    const subKey = this.#subKey(slot);
    if (key === null || subKey === null) return;
    let byKey = this.#groups.get(key);
    if (byKey === undefined) this.#groups.set(key, (byKey = new Map()));
    let group = byKey.get(subKey);
    if (group === undefined) byKey.set(subKey, (group = new SortedSlots(this.grouping.order)));
    group.add(slot);
  }

  remove(slot: Slot): void {
    const key = this.grouping.key(slot);
    const subKey = this.#subKey(slot);
    const byKey = key === null ? undefined : this.#groups.get(key);
    const group = subKey === null ? undefined : byKey?.get(subKey);
    if (group === undefined) return;
    group.remove(slot);
    if (group.size > 0) return;
    byKey!.delete(subKey!);
    if (byKey!.size === 0) this.#groups.delete(key!);
  }

  #subKey(slot: Slot): string | null {
    return this.grouping.subKey === undefined ? '' : this.grouping.subKey(slot);
  }
}

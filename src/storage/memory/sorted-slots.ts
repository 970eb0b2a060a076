/**
 * {@link SortedSlots}: slots kept in list order (`record.createdAt`, then `seq`), in buckets
 * of bounded size, so that an insert or a removal anywhere (a state change, a purge of the
 * oldest) moves at most a bucket's entries, and a page is read from its start position by
 * binary search rather than by a walk from either end.
 *
 * @module
 */
import type { ListPosition } from '../message-list.js';
import type { Slot } from './slot.js';

/** Most slots in one bucket before it is split in two. */
const BUCKET = 512;

/** Compares two places in list order, ascending (older first). */
function compare(a: ListPosition, b: ListPosition): number {
  return a.createdAt - b.createdAt || a.seq - b.seq;
}

/** The place of `slot` in list order. */
function placeOf(slot: Slot): ListPosition {
  return { createdAt: slot.record.createdAt, seq: slot.seq };
}

/** Slots in ascending list order, in buckets; read newest first with {@link SortedSlots.newestFirst}. */
export class SortedSlots {
  /** Non-empty buckets, each ascending, every slot of one before every slot of the next. */
  readonly #buckets: Slot[][] = [];
  #size = 0;

  /** How many slots it holds. */
  get size(): number {
    return this.#size;
  }

  /** Index of the first bucket whose last slot is at or after `place` (`buckets.length` when none is). */
  #bucketAtOrAfter(place: ListPosition): number {
    let low = 0;
    let high = this.#buckets.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const bucket = this.#buckets[mid]!;
      if (compare(placeOf(bucket[bucket.length - 1]!), place) < 0) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** Index in `bucket` of the first slot at or after `place`. */
  static #indexAtOrAfter(bucket: readonly Slot[], place: ListPosition): number {
    let low = 0;
    let high = bucket.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compare(placeOf(bucket[mid]!), place) < 0) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** Adds `slot` at its place (most often the end: messages are stored newest last). */
  add(slot: Slot): void {
    const place = placeOf(slot);
    this.#size++;
    const buckets = this.#buckets;
    if (buckets.length === 0) {
      buckets.push([slot]);
      return;
    }
    let b = this.#bucketAtOrAfter(place);
    if (b === buckets.length) b--;
    const bucket = buckets[b]!;
    bucket.splice(SortedSlots.#indexAtOrAfter(bucket, place), 0, slot);
    if (bucket.length > BUCKET) buckets.splice(b + 1, 0, bucket.splice(BUCKET >>> 1));
  }

  /** Removes `slot` (placed with its current `createdAt` and `seq`); nothing when it is not held. */
  remove(slot: Slot): void {
    const place = placeOf(slot);
    const b = this.#bucketAtOrAfter(place);
    const bucket = this.#buckets[b];
    if (bucket === undefined) return;
    const i = SortedSlots.#indexAtOrAfter(bucket, place);
    if (bucket[i] !== slot) return;
    bucket.splice(i, 1);
    this.#size--;
    if (bucket.length === 0) this.#buckets.splice(b, 1);
  }

  /** The slots newest first, starting strictly after (older than) `after` when given. */
  *newestFirst(after?: ListPosition): Generator<Slot, void, undefined> {
    const buckets = this.#buckets;
    let b = buckets.length - 1;
    let i = b >= 0 ? buckets[b]!.length - 1 : -1;
    if (after !== undefined) {
      // The first slot at or after `after`; the one before it is the newest older one.
      b = this.#bucketAtOrAfter(after);
      if (b === buckets.length) {
        b--;
        i = b >= 0 ? buckets[b]!.length - 1 : -1;
      } else i = SortedSlots.#indexAtOrAfter(buckets[b]!, after) - 1;
    }
    while (b >= 0) {
      const bucket = buckets[b]!;
      for (; i >= 0; i--) yield bucket[i]!;
      b--;
      i = b >= 0 ? buckets[b]!.length - 1 : -1;
    }
  }
}

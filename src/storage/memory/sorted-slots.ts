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

/**
 * Whether `slot` comes before the place (`createdAt`, `seq`) in list order (older first).
 * Fields rather than a place object: it runs at every step of every search.
 */
function isBefore(slot: Slot, createdAt: number, seq: number): boolean {
  const at = slot.record.createdAt;
  return at < createdAt || (at === createdAt && slot.seq < seq);
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

  /** Index of the first bucket whose last slot is at or after the place (`buckets.length` when none is). */
  #bucketAtOrAfter(createdAt: number, seq: number): number {
    let low = 0;
    let high = this.#buckets.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const bucket = this.#buckets[mid]!;
      if (isBefore(bucket[bucket.length - 1]!, createdAt, seq)) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** Index in `bucket` of the first slot at or after the place. */
  static #indexAtOrAfter(bucket: readonly Slot[], createdAt: number, seq: number): number {
    let low = 0;
    let high = bucket.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (isBefore(bucket[mid]!, createdAt, seq)) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** Adds `slot` at its place (most often the end: messages are stored newest last). */
  add(slot: Slot): void {
    const createdAt = slot.record.createdAt;
    const seq = slot.seq;
    this.#size++;
    const buckets = this.#buckets;
    const lastBucket = buckets[buckets.length - 1];
    let b: number;
    let bucket: Slot[];
    if (lastBucket === undefined) {
      buckets.push([slot]);
      return;
    } else if (isBefore(lastBucket[lastBucket.length - 1]!, createdAt, seq)) {
      // The newest: at the end, without a search.
      b = buckets.length - 1;
      bucket = lastBucket;
      bucket.push(slot);
    } else {
      b = this.#bucketAtOrAfter(createdAt, seq);
      bucket = buckets[b]!;
      bucket.splice(SortedSlots.#indexAtOrAfter(bucket, createdAt, seq), 0, slot);
    }
    if (bucket.length > BUCKET) buckets.splice(b + 1, 0, bucket.splice(BUCKET >>> 1));
  }

  /** Removes `slot` (placed with its current `createdAt` and `seq`); nothing when it is not held. */
  remove(slot: Slot): void {
    const createdAt = slot.record.createdAt;
    const seq = slot.seq;
    const b = this.#bucketAtOrAfter(createdAt, seq);
    const bucket = this.#buckets[b];
    if (bucket === undefined) return;
    const i = SortedSlots.#indexAtOrAfter(bucket, createdAt, seq);
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
      b = this.#bucketAtOrAfter(after.createdAt, after.seq);
      if (b === buckets.length) {
        b--;
        i = b >= 0 ? buckets[b]!.length - 1 : -1;
      } else i = SortedSlots.#indexAtOrAfter(buckets[b]!, after.createdAt, after.seq) - 1;
    }
    while (b >= 0) {
      const bucket = buckets[b]!;
      for (; i >= 0; i--) yield bucket[i]!;
      b--;
      i = b >= 0 ? buckets[b]!.length - 1 : -1;
    }
  }
}

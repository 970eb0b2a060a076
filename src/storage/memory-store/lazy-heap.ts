/**
 * A min-heap whose entries may go stale after they were pushed ({@link LazyHeap}): the
 * memory record store's queues leave an entry where it is when its row moves on, and skip it
 * when it comes up, rather than find and remove it (O(n) in a plain heap).
 *
 * @module
 */
import { MinHeap } from '../../util/min-heap.js';

/** Stale entries a heap may hold before a rebuild is considered; below this, skipping them costs less. */
const COMPACT_AFTER = 1024;

/**
 * A min-heap of entries, each current or stale by `isCurrent`, which only ever turns from
 * current to stale. {@link peek} and {@link pop} pass over stale entries (dropping them);
 * the owner reports each entry it made stale ({@link forget}), and when stale entries
 * outnumber current ones the heap is rebuilt without them, so that rows moving on while
 * their entries sit deep in the heap cannot grow it without bound. Every operation is
 * O(log n) amortized.
 */
export class LazyHeap<E> {
  #heap: MinHeap<E>;
  /** How many entries are known stale (an estimate: an entry made stale unreported is not counted). */
  #stale = 0;

  /**
   * `before(a, b)`: whether `a` comes out before `b`; `isCurrent(entry)`: whether the entry
   * still stands for its row.
   */
  constructor(
    private readonly before: (a: E, b: E) => boolean,
    private readonly isCurrent: (entry: E) => boolean,
  ) {
    this.#heap = new MinHeap(before);
  }

  /** How many entries it holds, stale ones included. */
  get size(): number {
    return this.#heap.size;
  }

  /** Adds `entry`. */
  push(entry: E): void {
    this.#heap.push(entry);
  }

  /** The first current entry, left in place (stale ones above it are dropped); `undefined` when none. */
  peek(): E | undefined {
    for (let top = this.#heap.peek(); top !== undefined; top = this.#heap.peek()) {
      if (this.isCurrent(top)) return top;
      this.#heap.pop();
      if (this.#stale > 0) this.#stale--;
    }
    return undefined;
  }

  /** Removes and returns the first current entry; `undefined` when none. */
  pop(): E | undefined {
    const top = this.peek();
    if (top !== undefined) this.#heap.pop();
    return top;
  }

  /** Notes that one of its entries went stale; rebuilds the heap once most are. */
  forget(): void {
    this.#stale++;
    if (this.#stale > COMPACT_AFTER && this.#stale * 2 > this.#heap.size) this.#compact();
  }

  /** Rebuilds the heap from its current entries only. */
  #compact(): void {
    const kept = new MinHeap<E>(this.before);
    for (let entry = this.#heap.pop(); entry !== undefined; entry = this.#heap.pop()) if (this.isCurrent(entry)) kept.push(entry);
    this.#heap = kept;
    this.#stale = 0;
  }
}

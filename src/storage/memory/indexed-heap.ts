import { MinHeap } from '../../util/min-heap.js';

/**
 * A binary heap whose items know their position in it ({@link IndexedHeap}), so that any item
 * leaves it in O(log n) without leaving a stale entry behind: the memory record store's
 * queues are heaps of its slots, which leave them in any order.
 *
 * @module
 */

/** An item that may sit in several indexed heaps: `position(i)` is its index in the heap using slot `i`, -1 when out. */
export interface Positioned {
  position(slot: number): number;
  setPosition(slot: number, at: number): void;
}

/**
 * An indexed binary heap: the first item by `before` in O(1), adding and removing any item in
 * O(log n) (adding is O(1) when items come in order). Each heap writes its items' positions
 * into their position `slot` ({@link Positioned}), so that one item may be in several heaps at once.
 */
export class IndexedHeap<T extends Positioned> {
  readonly #items: T[] = [];

  /** `before(a, b)`: whether `a` comes before `b`; `slot`: the position index this heap owns. */
  constructor(
    private readonly before: (a: T, b: T) => boolean,
    private readonly slot: number,
  ) {}

  /** How many items it holds. */
  get size(): number {
    return this.#items.length;
  }

  /** The first item, or `undefined` when empty. */
  peek(): T | undefined {
    return this.#items[0];
  }

  /** Removes and returns the first item; `undefined` when empty. */
  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    if (top === undefined) return undefined;
    top.setPosition(this.slot, -1);
    const last = items.pop()!;
    if (items.length > 0) this.#down(last, 0);
    return top;
  }

  /** Whether `item` is in it. */
  has(item: T): boolean {
    const at = item.position(this.slot);
    return at >= 0 && this.#items[at] === item;
  }

  /**
   * The first items in order, up to `limit`, as long as `keep` says yes, read without
   * changing the heap: a walk of the tree that expands the least of the nodes it reached
   * (a child never comes before its parent), O(k log k) for `k` items.
   */
  firstWhile(limit: number, keep: (item: T) => boolean): T[] {
    const items = this.#items;
    const taken: T[] = [];
    if (limit <= 0 || items.length === 0) return taken;
    const reached = new MinHeap<number>((a, b) => this.before(items[a]!, items[b]!));
    reached.push(0);
    while (taken.length < limit) {
      const at = reached.pop();
      if (at === undefined || !keep(items[at]!)) break;
      taken.push(items[at]!);
      if (2 * at + 1 < items.length) reached.push(2 * at + 1);
      if (2 * at + 2 < items.length) reached.push(2 * at + 2);
    }
    return taken;
  }

  /** Adds `item` (not in it yet). */
  add(item: T): void {
    this.#up(item, this.#items.push(item) - 1);
  }

  /** Removes `item`, if it is in it. */
  remove(item: T): void {
    if (!this.has(item)) return;
    const at = item.position(this.slot);
    const items = this.#items;
    item.setPosition(this.slot, -1);
    const last = items.pop()!;
    if (at === items.length) return;
    // The last item fills the hole, then moves up or down to where it belongs.
    if (at > 0 && this.before(last, items[(at - 1) >> 1]!)) this.#up(last, at);
    else this.#down(last, at);
  }

  /** Puts `item` at `at` or above, moving later parents down. */
  #up(item: T, at: number): void {
    const items = this.#items;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const above = items[parent]!;
      if (!this.before(item, above)) break;
      this.#put(above, at);
      at = parent;
    }
    this.#put(item, at);
  }

  /** Puts `item` at `at` or below, moving earlier children up. */
  #down(item: T, at: number): void {
    const items = this.#items;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= items.length) break;
      if (child + 1 < items.length && this.before(items[child + 1]!, items[child]!)) child++;
      const below = items[child]!;
      if (!this.before(below, item)) break;
      this.#put(below, at);
      at = child;
    }
    this.#put(item, at);
  }

  #put(item: T, at: number): void {
    this.#items[at] = item;
    item.setPosition(this.slot, at);
  }
}

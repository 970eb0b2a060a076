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
   * (a child never comes before its parent), O(k log k) for `k` items. The nodes reached
   * are kept in a heap of their indexes, inline here: a sweep reads a thousand rows a batch.
   */
  firstWhile(limit: number, keep: (item: T) => boolean): T[] {
    const items = this.#items;
    const count = items.length;
    const taken: T[] = [];
    if (limit <= 0 || count === 0) return taken;
    const reached: number[] = [0];
    while (taken.length < limit && reached.length > 0) {
      const at = reached[0]!;
      const item = items[at]!;
      if (!keep(item)) break;
      taken.push(item);
      const left = 2 * at + 1;
      // The taken node's place goes to its first child, or to the last node reached.
      if (left < count) {
        reached[0] = left;
        this.#downIndex(reached, items);
        if (left + 1 < count) this.#upIndex(reached, items, left + 1);
      } else {
        const last = reached.pop()!;
        if (reached.length > 0) {
          reached[0] = last;
          this.#downIndex(reached, items);
        }
      }
    }
    return taken;
  }

  /** Moves the index at the root of `reached` down to its place (by the items it names). */
  #downIndex(reached: number[], items: readonly T[]): void {
    const size = reached.length;
    const moving = reached[0]!;
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= size) break;
      if (child + 1 < size && this.before(items[reached[child + 1]!]!, items[reached[child]!]!)) child++;
      if (!this.before(items[reached[child]!]!, items[moving]!)) break;
      reached[at] = reached[child]!;
      at = child;
    }
    reached[at] = moving;
  }

  /** Adds index `index` to `reached`, moving it up to its place. */
  #upIndex(reached: number[], items: readonly T[], index: number): void {
    let at = reached.push(index) - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.before(items[index]!, items[reached[parent]!]!)) break;
      reached[at] = reached[parent]!;
      at = parent;
    }
    reached[at] = index;
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

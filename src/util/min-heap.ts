/**
 * A binary min-heap: the smallest item by `before` in O(1), push and pop in O(log n).
 * Written here rather than taken from npm: the small heaps there are ESM-only, and this
 * package also ships CommonJS for Node 20.
 */
export class MinHeap<T> {
  readonly #items: T[] = [];
  readonly #before: (a: T, b: T) => boolean;

  /** `before(a, b)`: whether `a` comes out before `b`. */
  constructor(before: (a: T, b: T) => boolean) {
    this.#before = before;
  }

  /** How many items it holds. */
  get size(): number {
    return this.#items.length;
  }

  /** The smallest item, left in place; `undefined` when empty. */
  peek(): T | undefined {
    return this.#items[0];
  }

  /** Adds `item`. */
  push(item: T): void {
    const items = this.#items;
    let at = items.push(item) - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.#before(item, items[parent]!)) break;
      items[at] = items[parent]!;
      at = parent;
    }
    items[at] = item;
  }

  /** Removes and returns the smallest item; `undefined` when empty. */
  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    // Sift the last item down from the root into the hole the top left.
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= items.length) break;
      if (child + 1 < items.length && this.#before(items[child + 1]!, items[child]!)) child++;
      if (!this.#before(items[child]!, last)) break;
      items[at] = items[child]!;
      at = child;
    }
    items[at] = last;
    return top;
  }
}

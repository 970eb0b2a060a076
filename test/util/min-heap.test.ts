import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/util/mulberry32.js';
import { MinHeap } from '../../src/util/min-heap.js';

describe('MinHeap', () => {
  it('gives back every item pushed, smallest first, for random pushes and pops mixed', () => {
    const random = mulberry32(7);
    const heap = new MinHeap<number>((a, b) => a < b);
    const mirror: number[] = [];
    for (let step = 0; step < 5_000; step++) {
      if (random() < 0.6 || mirror.length === 0) {
        const value = Math.floor(random() * 1_000);
        heap.push(value);
        mirror.push(value);
      } else {
        mirror.sort((a, b) => a - b);
        expect(heap.peek()).toBe(mirror[0]);
        expect(heap.pop()).toBe(mirror.shift());
      }
      expect(heap.size).toBe(mirror.length);
    }
    const rest: number[] = [];
    while (heap.size > 0) rest.push(heap.pop()!);
    expect(rest).toEqual(mirror.sort((a, b) => a - b));
  });

  it('is empty-safe and orders by the comparison given, ties included', () => {
    const heap = new MinHeap<{ at: number; seq: number }>((a, b) => a.at < b.at || (a.at === b.at && a.seq < b.seq));
    expect(heap.pop()).toBeUndefined();
    expect(heap.peek()).toBeUndefined();
    for (const [at, seq] of [[5, 2], [1, 9], [5, 1], [1, 3]] as const) heap.push({ at, seq });
    const order = [heap.pop(), heap.pop(), heap.pop(), heap.pop()].map((item) => `${item!.at}/${item!.seq}`);
    expect(order).toEqual(['1/3', '1/9', '5/1', '5/2']);
    expect(heap.size).toBe(0);
  });
});

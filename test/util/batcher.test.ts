import { describe, expect, it } from 'vitest';
import { Batcher } from '../../src/util/batcher.js';

/** A batcher over doubling, recording every batch and single call it makes. */
function doubling(options: { maxBatch?: number; maxInFlight?: number; failBatches?: boolean; bad?: number; keyOf?: (item: number) => unknown } = {}) {
  const batches: number[][] = [];
  const singles: number[] = [];
  /** Resolvers of the batches still out, so a test decides when each comes back. */
  const pending: (() => void)[] = [];
  const hold = (): Promise<void> => new Promise((resolve) => pending.push(resolve));
  const batcher = new Batcher<number, number>({
    maxBatch: options.maxBatch ?? 100,
    maxInFlight: options.maxInFlight ?? 1,
    keyOf: options.keyOf,
    runBatch: async (items) => {
      batches.push([...items]);
      await hold();
      if (options.failBatches === true || items.includes(options.bad ?? Number.NaN)) throw new Error('batch failed');
      return items.map((item) => item * 2);
    },
    runOne: async (item) => {
      singles.push(item);
      await hold();
      if (item === options.bad) throw new Error(`item ${item} is bad`);
      return item * 2;
    },
  });
  /** Lets every call out now come back, until nothing is out. */
  const drain = async (): Promise<void> => {
    for (let turn = 0; turn < 50; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
      while (pending.length > 0) pending.shift()!();
    }
  };
  return { batcher, batches, singles, drain };
}

describe('Batcher', () => {
  it('sends a lone call alone, and the calls made while it is out together, each with its own result', async () => {
    const { batcher, batches, singles, drain } = doubling();
    const first = batcher.call(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(singles).toEqual([1]);
    const rest = [2, 3, 4].map((item) => batcher.call(item));
    await drain();
    expect(await first).toBe(2);
    expect(await Promise.all(rest)).toEqual([4, 6, 8]);
    expect(batches).toEqual([[2, 3, 4]]);
  });

  it('takes the calls of one turn as one batch', async () => {
    const { batcher, batches, singles, drain } = doubling();
    const results = Promise.all([5, 6, 7].map((item) => batcher.call(item)));
    await drain();
    expect(await results).toEqual([10, 12, 14]);
    expect(batches).toEqual([[5, 6, 7]]);
    expect(singles).toEqual([]);
  });

  it('keeps at most maxBatch items in a batch and maxInFlight batches out', async () => {
    const { batcher, batches, drain } = doubling({ maxBatch: 2, maxInFlight: 2 });
    const results = Promise.all([1, 2, 3, 4, 5, 6, 7].map((item) => batcher.call(item)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
    await drain();
    expect(await results).toEqual([2, 4, 6, 8, 10, 12, 14]);
    expect(batches).toEqual([[1, 2], [3, 4], [5, 6], [7]].filter((batch) => batch.length > 1));
  });

  it('runs each item of a failed batch alone, so only the item that fails alone fails', async () => {
    const { batcher, batches, singles, drain } = doubling({ bad: 3 });
    const settled = Promise.allSettled([1, 2, 3, 4].map((item) => batcher.call(item)));
    await drain();
    const outcomes = await settled;
    expect(batches).toEqual([[1, 2, 3, 4]]);
    expect(singles.sort()).toEqual([1, 2, 3, 4]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual([
      2,
      4,
      'item 3 is bad',
      8,
    ]);
  });

  it('turns a batch that failed as a whole (a deadlock, say) into results when each item succeeds alone', async () => {
    const { batcher, drain } = doubling({ failBatches: true });
    const results = Promise.all([1, 2, 3].map((item) => batcher.call(item)));
    await drain();
    expect(await results).toEqual([2, 4, 6]);
  });

  it('keeps items of one key in separate batches, the later waiting for the next, in order', async () => {
    const { batcher, batches, drain } = doubling({ keyOf: (item) => item % 10, maxInFlight: 2 });
    const results = Promise.all([1, 2, 11, 3, 21, 12].map((item) => batcher.call(item)));
    await drain();
    expect(await results).toEqual([2, 4, 22, 6, 42, 24]);
    expect(batches).toEqual([
      [1, 2, 3],
      [11, 12],
    ]);
  });
});

/**
 * The claim loop shared by the submit worker and the report dispatcher, on its own: a fake
 * storage queue of numbers, fake timers where the poll interval is the subject.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClaimLoop, type ClaimLoopOptions } from '../../src/outbox/claim-loop.js';

/** A queue of numbered items, and a runner whose work each test settles by hand. */
function harness(queued: number, options: Partial<ClaimLoopOptions<number>> = {}) {
  const queue = Array.from({ length: queued }, (_, i) => i);
  const claims: number[] = [];
  const running = new Map<number, () => void>();
  const refused: number[] = [];
  const errors: unknown[] = [];
  const loop = new ClaimLoop<number>({
    capacity: 4,
    pollIntervalMs: 1_000,
    claim: async (limit) => {
      claims.push(limit);
      return queue.splice(0, limit);
    },
    run: (item) => new Promise<void>((resolve) => running.set(item, resolve)),
    onRefused: async (items) => void refused.push(...items),
    onError: (error) => void errors.push(error),
    now: Date.now,
    ...options,
  });
  const finish = (item: number): void => {
    running.get(item)!();
    running.delete(item);
  };
  return { loop, queue, claims, running, refused, errors, finish };
}

/** Lets promise callbacks and immediates run. */
async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

afterEach(() => {
  vi.useRealTimers();
});

describe('ClaimLoop', () => {
  it('holds at most its capacity, and claims more as held work finishes while a backlog waits', async () => {
    const { loop, queue, running, finish } = harness(10);
    loop.start();
    await turns();
    expect([...running.keys()]).toEqual([0, 1, 2, 3]);
    expect(queue).toHaveLength(6);

    finish(0);
    await turns();
    expect([...running.keys()]).toEqual([1, 2, 3, 4]);
    for (const item of [1, 2, 3, 4]) finish(item);
    await turns();
    expect([...running.keys()]).toEqual([5, 6, 7, 8]);
    await loop.stop();
  });

  it('makes one poll of the wakes of one turn', async () => {
    const { loop, claims } = harness(0);
    loop.start();
    await turns();
    const before = claims.length;
    for (let i = 0; i < 50; i++) loop.wake();
    await turns();
    expect(claims.length - before).toBe(1);
    await loop.stop();
  });

  it('polls again after pollIntervalMs when nothing wakes it', async () => {
    vi.useFakeTimers();
    const { loop, queue, claims, running } = harness(0);
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(claims).toHaveLength(1);
    queue.push(7);
    await vi.advanceTimersByTimeAsync(999);
    expect(running.size).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect([...running.keys()]).toEqual([7]);
    await loop.stop();
  });

  it('waits for a batch of room when refillAt asks for it', async () => {
    const { loop, running, claims, finish } = harness(20, { capacity: 8, refillAt: 4, batchSize: 8 });
    loop.start();
    await turns();
    expect(running.size).toBe(8);
    const before = claims.length;
    for (const item of [0, 1, 2]) finish(item);
    await turns();
    expect(claims.length).toBe(before);
    finish(3);
    await turns();
    expect(claims.length).toBe(before + 1);
    expect(running.size).toBe(8);
    await loop.stop();
  });

  it('counts reserved room and held hand-overs against the capacity', async () => {
    const { loop, running } = harness(10);
    loop.start();
    await turns();
    expect(loop.reserve(1)).toBe(false);
    for (const item of [...running.keys()]) running.get(item)!();
    await turns();
    // The loop refilled to its capacity at once: the backlog claims what finished work freed.
    expect(loop.room()).toBe(0);
    await loop.stop();
    expect(loop.reserve(1)).toBe(false);
  });

  it('reserves room before a hand-over and releases it after', async () => {
    const { loop } = harness(0);
    loop.start();
    await turns();
    expect(loop.reserve(3)).toBe(true);
    expect(loop.room()).toBe(1);
    expect(loop.reserve(2)).toBe(false);
    let done!: () => void;
    loop.release(3);
    loop.hold(new Promise<void>((resolve) => (done = resolve)));
    expect(loop.room()).toBe(3);
    done();
    await turns();
    expect(loop.room()).toBe(4);
    await loop.stop();
  });

  it('gives back together the items of a claim its runner refused', async () => {
    const { loop, refused, running } = harness(4, { run: (item) => (item % 2 === 0 ? new Promise<void>(() => {}) : undefined) });
    loop.start();
    await turns();
    expect(refused).toEqual([1, 3]);
    expect(running.size).toBe(0);
    await loop.stop();
  });

  it('reports a failed claim and claims again at the next poll', async () => {
    vi.useFakeTimers();
    let fail = true;
    const { loop, errors, running, queue } = harness(1, {
      claim: async (limit) => {
        if (fail) throw new Error('database down');
        return queue.splice(0, limit);
      },
    });
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(errors).toHaveLength(1);
    fail = false;
    await vi.advanceTimersByTimeAsync(1_000);
    expect([...running.keys()]).toEqual([0]);
    await loop.stop();
  });

  it('claims nothing after stop, and drain waits for every held item', async () => {
    const { loop, queue, running, claims, finish } = harness(6);
    loop.start();
    await turns();
    await loop.stop();
    const claimsAtStop = claims.length;
    loop.wake();
    finish(0);
    await turns();
    expect(claims.length).toBe(claimsAtStop);
    expect(queue).toHaveLength(2);

    let drained = false;
    const draining = loop.drain().then(() => (drained = true));
    await turns();
    expect(drained).toBe(false);
    for (const item of [...running.keys()]) finish(item);
    await draining;
    expect(drained).toBe(true);
  });
});

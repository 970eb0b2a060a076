/**
 * The `Retry-After` of the backlog refusals (429 `QUEUE_FULL`, 503 `BACKLOG_FULL`): the
 * time the excess would take to drain at the rate the queue drains. Driven here through
 * `BacklogGate` with a clock and a queue count the test sets, so the rates are exact: right
 * after a start it is not 60 s nor a tenth of the rate, with two instances draining one
 * shared queue it is not twice the time, and it never says longer than the drain takes.
 */
import { describe, expect, it } from 'vitest';
import { BacklogGate } from '../../src/http/backlog.js';
import { BACKLOG_DEFAULTS } from '../../src/http/options.js';
import { SmsError } from '../../src/errors.js';
import type { QueueCount } from '../../src/storage/contract.js';

const principal = { id: 'a' };

/** A shared queue of one principal's messages, and a clock; `drain(n)` takes n from it. */
function sharedQueue(queued: number) {
  const queue = { queued, clock: 1_700_000_000_000 };
  const count = async (): Promise<QueueCount> => ({ transactional: 0, bulk: queue.queued, oldestAcceptedAt: null });
  return { queue, count, now: () => queue.clock };
}

/** The `Retry-After` of a refused admit of `count` messages; fails when it was admitted. */
async function retryAfter(gate: BacklogGate, count = 1): Promise<number> {
  // admit() throws at once when its counts are fresh, and rejects when it read one first.
  const error = await Promise.resolve()
    .then(() => gate.admit(principal, count))
    .then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SmsError);
  return (error as SmsError).retryAfter!;
}

const perKey = (bound: number) => ({ ...BACKLOG_DEFAULTS, perKey: bound, refreshMs: 100 });

describe('Retry-After of the backlog bounds', () => {
  it('right after a start, is the excess over the rate seen so far: not 60 s, not a tenth of the rate', async () => {
    const { queue, count, now } = sharedQueue(1_500);
    const gate = new BacklogGate(count, perKey(500), now);
    // 0.5 s of draining at 200 a second, one message every 5 ms.
    for (let i = 0; i < 100; i++) {
      queue.clock += 5;
      queue.queued--;
      gate.left('a');
    }
    // 1,400 queued: 901 over the bound for one more, 4.5 s at 200 a second.
    expect(await retryAfter(gate)).toBe(5);
  });

  it('with nothing drained yet after a start, asks for the rest of the first window, not 60 s', async () => {
    const { queue, count, now } = sharedQueue(1_500);
    const gate = new BacklogGate(count, { ...perKey(500), total: 1_000 }, now);
    queue.clock += 2_000;
    expect(await retryAfter(gate)).toBe(8);
    queue.clock += 8_000;
    // A whole window without a message leaving: the carrier is stuck.
    expect(await retryAfter(gate)).toBe(60);
  });

  it('with two instances draining one queue, counts both: the shared count falls twice as fast as one drains', async () => {
    const { queue, count, now } = sharedQueue(3_000);
    const one = new BacklogGate(count, perKey(500), now);
    const two = new BacklogGate(count, perKey(500), now);
    expect(await retryAfter(one)).toBe(10);
    // Each instance takes 100 a second, 200 in all, for 2 s; `one` counts again meanwhile.
    for (let ms = 10; ms <= 2_000; ms += 10) {
      queue.clock += 10;
      queue.queued -= 2;
      one.left('a');
      two.left('a');
      if (ms % 500 === 0) await retryAfter(one);
    }
    // 2,600 queued: 2,101 over for one more, 10.5 s at 200 a second (21 s at one's 100).
    expect(await retryAfter(one)).toBe(11);
  });

  it('counts what this instance added between two counts as drained too', async () => {
    const { queue, count, now } = sharedQueue(600);
    const gate = new BacklogGate(count, perKey(700), now);
    await gate.admit(principal, 100);
    queue.queued += 100;
    // Another instance drains 50 a second for 4 s, none leaves through this one; this one
    // adds 50 more on the way.
    for (let s = 1; s <= 4; s++) {
      queue.clock += 1_000;
      queue.queued -= 50;
      if (s === 2) {
        await gate.admit(principal, 50);
        queue.queued += 50;
      }
    }
    // 550 queued: 200 more would be 50 over the bound. The count fell by 50 while this
    // instance added 150: 200 drained in 4 s, 50 a second, so 1 s.
    expect(await retryAfter(gate, 200)).toBe(1);
  });

  it.each([
    ['from a start', 0],
    ['after the queue was idle', 5_000],
  ])('never says longer than the drain at a steady rate takes, %s', async (_, idleMs) => {
    for (const rate of [20, 150, 1_000]) {
      const { queue, count, now } = sharedQueue(100_000);
      const gate = new BacklogGate(count, perKey(500), now);
      queue.clock += idleMs;
      const stepMs = 1000 / rate;
      for (const atMs of [300, 1_000, 3_000, 12_000]) {
        while (queue.clock < 1_700_000_000_000 + idleMs + atMs) {
          queue.clock += stepMs;
          queue.queued--;
          gate.left('a');
        }
        const excess = queue.queued + 1 - 500;
        // What the excess takes at that rate, in whole seconds, and a second for the count's age.
        const takes = Math.min(3600, Math.ceil(excess / rate));
        const answer = await retryAfter(gate);
        expect(answer, `at ${rate}/s, ${atMs} ms into the drain`).toBeLessThanOrEqual(takes + 1);
        expect(answer).toBeGreaterThanOrEqual(Math.min(3600, Math.floor(takes / 2)));
      }
    }
  });
});

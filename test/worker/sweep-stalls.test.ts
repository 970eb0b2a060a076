/**
 * The periodic sweeps must not freeze the process: 200,000 expired idempotency keys once held
 * the event loop for about 4 s in one stretch, so a request that came in meanwhile waited that
 * long. Each sweep is run here as the router runs it, over a storage filled with what a busy
 * day leaves, while an event-loop delay monitor records the longest wait.
 *
 * The bound. The aim is that no sweep holds the loop longer than 20 ms at a time; a batch
 * takes about 1 ms here. The monitor also sees what is not the sweep's: a garbage collection,
 * or the process put aside on a shared 2-core machine (up to 100 ms was seen with several test
 * runs at once). So a sweep is measured up to three times and judged by its best run (noise
 * only adds to a run, never takes away), against twice the aim: 40 ms. Before the sweeps
 * yielded between batches, every run stalled for seconds; a SQLite purge of 20,000 rows in one
 * transaction for well over 40 ms.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { outcome } from '../../src/lifecycle/states.js';
import { MemoryStorage } from '../../src/storage/memory/adapter.js';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';
import type { Storage } from '../../src/storage/contract.js';
import { buildNewMessage } from '../../src/testing/storage-suite/index.js';
import type { Periodic } from '../../src/worker/periodic.js';
import { receiptTimeoutSweep } from '../../src/worker/receipt-timeout.js';
import { retentionSweep, RETENTION_DEFAULTS } from '../../src/worker/retention.js';
import { timeSweep } from '../../src/worker/time-sweep.js';

const BOUND_MS = 40;
const T0 = 1_700_000_000_000;
const DAY = 86_400_000;
const DELIVERED = outcome('delivered', 'delivered_to_terminal');
/** A day later than anything stored, and past the default retention of messages. */
const LATER = T0 + 40 * DAY;
const ignore = (): void => undefined;

/** A real timer's wait, for the monitor (vitest's fake timers are not used in this file). */
const tick = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The longest the event loop waited while `work` ran, ms. The monitor records a wait only
 * between two of its own ticks (the first after `enable()` records nothing), so it ticks
 * before the work starts and after it ends.
 */
async function longestStall(work: () => Promise<unknown>): Promise<number> {
  const monitor = monitorEventLoopDelay({ resolution: 1 });
  monitor.enable();
  await tick(10);
  await work();
  await tick(10);
  monitor.disable();
  return monitor.max / 1e6;
}

/** The best of up to three runs of `run` (each on a storage of its own), stopping at one under the bound. */
async function bestStall(run: () => Promise<number>): Promise<number> {
  let best = Infinity;
  for (let attempt = 0; attempt < 3 && best >= BOUND_MS; attempt++) best = Math.min(best, await run());
  return best;
}

/**
 * Stores `count` idempotency keys, one a ms from `T0`, each expired a minute after; each with
 * its request's message when `withMessages` (SQLite stores no key without one).
 */
async function fillKeys(storage: Storage, count: number, withMessages: boolean): Promise<void> {
  const body = JSON.stringify([{ external_id: 'otp-1', recipient: '254712345678', sms_count: 1, message_ref: '019abc12-3456-7def-8123-456789abcdef' }]);
  for (let from = 0; from < count; from += 1000) {
    await Promise.all(
      Array.from({ length: Math.min(1000, count - from) }, (_, i) => {
        const createdAt = T0 + from + i;
        const key = { principalId: 'acme', key: `key-${from + i}`, bodyHash: 'h'.repeat(43), status: 200, body, createdAt, expiresAt: createdAt + 60_000 };
        return storage.insertMessages(withMessages ? [buildNewMessage({ createdAt, principalId: 'acme' })] : [], undefined, key);
      }),
    );
  }
}

/** Stores `count` messages in thousands, each submitted; `end` then ends them, or not. */
async function fillSubmitted(storage: Storage, count: number, end: boolean): Promise<void> {
  for (let from = 0; from < count; from += 1000) {
    const batch = Array.from({ length: Math.min(1000, count - from) }, (_, i) => buildNewMessage({ createdAt: T0 + from + i }));
    await storage.insertMessages(batch);
    await Promise.all(batch.map((message, i) => storage.recordSubmission(message.ref, 0, `carrier-${message.ref}`, T0 + from + i)));
    if (end) await Promise.all(batch.map((message, i) => storage.finish(message.ref, DELIVERED, T0 + from + i + 1)));
  }
}

function retention(storage: Storage, batchSize = RETENTION_DEFAULTS.batchSize): Periodic {
  return retentionSweep(storage, { ...RETENTION_DEFAULTS, batchSize }, () => LATER, ignore)!;
}

describe('the sweeps on the memory storage', () => {
  it('purge 200,000 expired keys and 100,000 old messages without holding the event loop', async () => {
    const stall = await bestStall(async () => {
      const storage = new MemoryStorage();
      await fillKeys(storage, 200_000, false);
      await fillSubmitted(storage, 100_000, true);
      const sweep = retention(storage);
      const stall = await longestStall(() => sweep.runNow());
      expect(await storage.purgeIdempotency(LATER, 10)).toBe(0);
      expect(await storage.purge(LATER, 10)).toBe(0);
      return stall;
    });
    expect(stall).toBeLessThan(BOUND_MS);
  });

  it('end 50,000 messages whose receipt never came without holding the event loop', async () => {
    const stall = await bestStall(async () => {
      const storage = new MemoryStorage();
      await fillSubmitted(storage, 50_000, false);
      let ended = 0;
      const sweep = receiptTimeoutSweep(storage, DAY, () => LATER, ignore, () => ended++);
      const stall = await longestStall(() => sweep.runNow());
      expect(ended).toBe(50_000);
      return stall;
    });
    expect(stall).toBeLessThan(BOUND_MS);
  });

  it('queue 50,000 scheduled messages come due without holding the event loop', async () => {
    const stall = await bestStall(async () => {
      const storage = new MemoryStorage();
      for (let from = 0; from < 50_000; from += 1000) {
        await storage.insertMessages(Array.from({ length: 1000 }, () => buildNewMessage({ createdAt: T0, sendAt: T0 + 1000 })));
      }
      let queued = 0;
      const sweep = timeSweep({ storage, intervalMs: 1000, now: () => LATER, emit: ignore, onTransition: () => queued++, wake: ignore })!;
      const stall = await longestStall(() => sweep.runNow());
      expect(queued).toBe(50_000);
      return stall;
    });
    expect(stall).toBeLessThan(BOUND_MS);
  });
});

describe('the sweeps on the SQLite storage', () => {
  // In memory: a commit's disk sync (and the WAL checkpoint) is the same for any write, and
  // is not what is measured here; the rows a transaction deletes are. A batch of 20,000, which
  // a host may set, is still served in short transactions.
  it('purge 20,000 expired keys and 20,000 old messages in batches of 20,000 without holding the event loop', async () => {
    const stall = await bestStall(async () => {
      const storage = new SqliteStorage({ path: ':memory:' });
      await fillKeys(storage, 20_000, true);
      await fillSubmitted(storage, 20_000, true);
      const sweep = retention(storage, 20_000);
      const stall = await longestStall(() => sweep.runNow());
      expect(await storage.purgeIdempotency(LATER, 10)).toBe(0);
      expect(await storage.purge(LATER, 10)).toBe(0);
      await storage.close();
      return stall;
    });
    expect(stall).toBeLessThan(BOUND_MS);
  });
});

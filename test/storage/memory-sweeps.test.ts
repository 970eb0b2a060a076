/**
 * A memory storage sweep costs what it takes, not what is kept: purging the expired keys, the
 * old messages and the old inbound messages, and ending the overdue submitted ones, each
 * took a walk (and a sort) of everything kept at every batch, so draining a day of records
 * was quadratic. Each case here drains 1,000 due items, in batches of 50, from a storage that
 * also keeps 100,000 or more that are not due. That takes about 1 ms; a walk of everything
 * kept per batch takes hundreds. The bound, 50 ms for the best of three rounds, leaves room
 * for a slow or shared CI machine and none for a walk.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { outcome } from '../../src/lifecycle/states.js';
import { MemoryStorage } from '../../src/storage/memory/adapter.js';
import type { NewInbound } from '../../src/storage/inbound-record.js';
import { buildNewMessage } from '../../src/testing/storage-suite/index.js';

const T0 = 1_700_000_000_000;
const DUE = 1_000;
const BOUND_MS = 50;
const BATCH = 50;
const DELIVERED = outcome('delivered', 'delivered_to_terminal');
const NO_RECEIPT = outcome('expired', 'unknown', 'No receipt');

/** A case: makes the items that are due (before `T0`) and drains them, returning how many it took. */
interface Sweep {
  addDue(storage: MemoryStorage, round: number): Promise<void>;
  drain(storage: MemoryStorage): Promise<number>;
}

/** Calls `batch` until it returns fewer than {@link BATCH}; returns how many in all. */
async function drain(batch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const done = await batch();
    total += done;
    if (done < BATCH) return total;
  }
}

/** The least time, ms, that draining the due items of `sweep` took over three rounds on `storage`. */
async function bestDrain(storage: MemoryStorage, sweep: Sweep): Promise<number> {
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    await sweep.addDue(storage, round);
    const start = performance.now();
    expect(await sweep.drain(storage)).toBe(DUE);
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

/** Draining the due items of `sweep` from a storage that keeps `fillKept`'s items besides stays under the bound. */
async function expectCostOfDueOnly(sweep: Sweep, fillKept: (storage: MemoryStorage) => Promise<void>): Promise<void> {
  const storage = new MemoryStorage();
  await fillKept(storage);
  expect(await bestDrain(storage, sweep)).toBeLessThan(BOUND_MS);
}

/** Stores `count` messages from `at` on, a ms apart, submitted; ended with `end` at the same time if given. */
async function storeMessages(storage: MemoryStorage, count: number, at: number, end?: 'delivered'): Promise<void> {
  for (let from = 0; from < count; from += 1000) {
    const batch = Array.from({ length: Math.min(1000, count - from) }, (_, i) => buildNewMessage({ createdAt: at + from + i }));
    await storage.insertMessages(batch);
    await Promise.all(batch.map((message, i) => storage.recordSubmission(message.ref, 0, `carrier-${message.ref}`, at + from + i)));
    if (end !== undefined) await Promise.all(batch.map((message, i) => storage.finish(message.ref, DELIVERED, at + from + i)));
  }
}

async function storeKeys(storage: MemoryStorage, count: number, at: number, prefix: string): Promise<void> {
  for (let i = 0; i < count; i++) {
    const createdAt = at + i;
    await storage.insertMessages([], undefined, { principalId: 'acme', key: `${prefix}-${i}`, bodyHash: 'h', status: 200, body: '[]', createdAt, expiresAt: createdAt + 1 });
  }
}

function inbound(receivedAt: number, withHook: boolean): NewInbound {
  return {
    ref: randomUUID(), principalId: 'acme', profileCode: '22021', from: '254700000001', to: '22021', text: 'Hello', receivedAt,
    callbackUrl: withHook ? 'https://client.example/inbound' : null, callbackSecret: null, uid: withHook ? randomUUID() : null,
  };
}

describe('a memory storage sweep costs what it takes', () => {
  it('purging 1,000 expired keys among 200,000 live ones', async () => {
    await expectCostOfDueOnly(
      {
        addDue: (storage, round) => storeKeys(storage, DUE, T0 - 10 * DUE, `expired-${round}`),
        drain: (storage) => drain(() => storage.purgeIdempotency(T0, BATCH)),
      },
      (storage) => storeKeys(storage, 200_000, T0, 'live'),
    );
  });

  it('purging 1,000 old messages among 100,000 recent ones', async () => {
    await expectCostOfDueOnly(
      {
        addDue: (storage) => storeMessages(storage, DUE, T0 - 10 * DUE, 'delivered'),
        drain: (storage) => drain(() => storage.purge(T0, BATCH)),
      },
      (storage) => storeMessages(storage, 100_000, T0, 'delivered'),
    );
  });

  it('ending 1,000 overdue submitted messages among 100,000 ended ones', async () => {
    await expectCostOfDueOnly(
      {
        addDue: (storage) => storeMessages(storage, DUE, T0 - 10 * DUE),
        drain: (storage) => drain(async () => (await storage.expireOverdue(T0, BATCH, NO_RECEIPT, T0)).length),
      },
      (storage) => storeMessages(storage, 100_000, T0, 'delivered'),
    );
  });

  it('purging 1,000 old inbound messages among 100,000 whose webhook is pending', async () => {
    await expectCostOfDueOnly(
      {
        addDue: async (storage) => {
          for (let i = 0; i < DUE; i++) await storage.insertInbound(inbound(T0 - 10 * DUE + i, false));
        },
        drain: (storage) => drain(() => storage.purgeInbound(T0, BATCH)),
      },
      async (storage) => {
        for (let i = 0; i < 100_000; i++) await storage.insertInbound(inbound(T0 - 100 * DUE, true));
      },
    );
  });
});

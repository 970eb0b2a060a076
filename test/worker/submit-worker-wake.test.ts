/**
 * Regression: the worker stopped claiming for good when it was woken while every slot was
 * busy (a request stored messages while `concurrency` submissions were in flight). Found by
 * the e2e crash test, where queued messages were never submitted under load.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../src/storage/memory/adapter.js';
import { buildNewMessage } from '../../src/testing/storage-suite/index.js';
import { SubmitWorker } from '../../src/worker/submit-worker.js';
import { GatedDelivery } from '../helpers/gated-delivery.js';
import { eventually } from '../helpers/poll.js';

describe('SubmitWorker', () => {
  it('keeps claiming after a wake that came while every slot was busy', async () => {
    const storage = new MemoryStorage();
    const delivery = new GatedDelivery('first');
    const worker = new SubmitWorker({
      storage,
      delivery,
      emit: () => {},
      // One slot, and a poll interval too long to rescue a lost claim loop within the test.
      config: {
        concurrency: 1,
        pollIntervalMs: 60_000,
        leaseMs: 60_000,
        maxAttempts: 10,
        retryBaseMs: 1_000,
        retryMaxMs: 600_000,
        receiptWaitMs: 60_000,
        receiptTimeoutMs: 3_600_000,
      },
      owner: 'w',
      now: Date.now,
      onTransition: () => {},
    });
    const [first, second] = [buildNewMessage({ createdAt: 1 }), buildNewMessage({ createdAt: 2 })];
    await storage.insertMessages([first]);
    worker.start();
    await eventually(() => delivery.submitted.length === 1);

    // The only slot is busy: this wake finds no room, as a request arriving now would.
    await storage.insertMessages([second]);
    worker.wake();
    delivery.open();

    await eventually(() => delivery.submitted.includes(second.ref), { timeoutMs: 2_000 });
    await worker.close();
    expect(delivery.submitted).toEqual([first.ref, second.ref]);
  });
});

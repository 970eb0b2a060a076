/**
 * Closing the receipt handler: the carrier was answered for a parked receipt already, so
 * close() tries it once more rather than drop it.
 */
import { describe, expect, it } from 'vitest';
import type { SmsEventName } from '../../src/events.js';
import { outcome } from '../../src/lifecycle/states.js';
import type { Transition } from '../../src/storage/contract.js';
import { MemoryStorage } from '../../src/storage/memory.js';
import { buildNewMessage } from '../../src/testing/storage-suite.js';
import { ReceiptHandler } from '../../src/worker/receipt-handler.js';

const DELIVERED = outcome('delivered', 'delivered_to_terminal');

/** A handler on MemoryStorage that waits a minute for unmatched receipts; its transitions and errors. */
function handlerOn(storage: MemoryStorage) {
  const transitions: Transition[] = [];
  const errors: string[] = [];
  const handler = new ReceiptHandler({
    storage,
    emit: (name: SmsEventName, payload) => {
      if (name === 'error') errors.push(String((payload as { error: Error }).error.message));
    },
    now: Date.now,
    waitMs: 60_000,
    onTransition: (transition) => void transitions.push(transition),
  });
  return { handler, transitions, errors };
}

describe('ReceiptHandler.close', () => {
  it('applies a parked receipt whose submission was recorded meanwhile, instead of dropping it', async () => {
    const storage = new MemoryStorage();
    const { handler, transitions, errors } = handlerOn(storage);
    const message = buildNewMessage();
    await storage.insertMessages([message]);
    // The receipt overtakes the recording of its own submission: parked, and the carrier answered.
    await handler.receive({ carrierId: 'carrier-1', outcome: DELIVERED });
    await storage.recordSubmission(message.ref, 0, 'carrier-1', Date.now());
    // No macrotask has run since, so the parked receipt's first retry (50 ms) has not fired.
    expect(transitions).toEqual([]);
    await handler.close();
    expect(transitions.map((t) => t.message.state)).toEqual(['delivered']);
    expect((await storage.getMessage(message.principalId, message.ref))!.state).toBe('delivered');
    expect(errors).toEqual([]);
  });

  it('drops, with an error event, a parked receipt that still matches nothing', async () => {
    const storage = new MemoryStorage();
    const { handler, transitions, errors } = handlerOn(storage);
    await handler.receive({ carrierId: 'nobody-knows', outcome: DELIVERED });
    await handler.close();
    expect(transitions).toEqual([]);
    expect(errors).toEqual(['Receipt for unknown carrier id "nobody-knows" dropped']);
  });
});

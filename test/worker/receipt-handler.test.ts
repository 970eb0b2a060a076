/**
 * The receipt handler answers the carrier only once a receipt is stored. A receipt that
 * overtook the recording of its submission is held until that recording lands; one whose
 * submission is still unknown after the hold is refused (ReceiptNotYetMatched) for the
 * carrier to re-send; one unmatched for `waitMs` since first seen is dropped and answered.
 * Where time is the subject, fake timers drive it (Date.now included).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ReceiptNotYetMatched } from '../../src/delivery/contract.js';
import type { SmsEventName } from '../../src/observe/events.js';
import { outcome } from '../../src/lifecycle/states.js';
import { MemoryStorage, type Transition } from '../../src/index.js';
import { buildNewMessage } from '../../src/testing.js';
import { ReceiptHandler } from '../../src/worker/receipt-handler.js';

const DELIVERED = outcome('delivered', 'delivered_to_terminal');

afterEach(() => {
  vi.useRealTimers();
});

/** A handler on `storage` that retries unmatched receipts for `waitMs`; its transitions and errors. */
function handlerOn(storage: MemoryStorage, waitMs = 60_000) {
  const transitions: Transition[] = [];
  const errors: string[] = [];
  const handler = new ReceiptHandler({
    storage,
    emit: (name: SmsEventName, payload) => {
      if (name === 'error') errors.push(String((payload as { error: Error }).error.message));
    },
    now: Date.now,
    waitMs,
    onTransition: (transition) => void transitions.push(transition),
  });
  return { handler, transitions, errors };
}

/** A stored, not yet submitted message. */
async function storedMessage(storage: MemoryStorage) {
  const message = buildNewMessage();
  await storage.insertMessages([message]);
  return message;
}

/** How `promise` settled: 'resolved', the rejection, or 'pending' (after the microtasks so far). */
function track(promise: Promise<void>): { state: 'pending' | 'resolved' | 'rejected'; error?: unknown; at?: number } {
  const seen: { state: 'pending' | 'resolved' | 'rejected'; error?: unknown; at?: number } = { state: 'pending' };
  promise.then(
    () => Object.assign(seen, { state: 'resolved', at: Date.now() }),
    (error: unknown) => Object.assign(seen, { state: 'rejected', error, at: Date.now() }),
  );
  return seen;
}

describe('ReceiptHandler.receive', () => {
  it('resolves a receipt that overtook its submission only after the submission is recorded (100 ms later) and applied', async () => {
    vi.useFakeTimers();
    const storage = new MemoryStorage();
    const { handler, transitions, errors } = handlerOn(storage);
    const message = await storedMessage(storage);
    const started = Date.now();
    let stateWhenAnswered: string | undefined;
    const answer = track(
      handler.receive({ carrierId: 'carrier-1', outcome: DELIVERED }).then(async () => {
        stateWhenAnswered = (await storage.getMessage(message.principalId, message.ref))!.state;
      }),
    );
    await vi.advanceTimersByTimeAsync(100);
    expect(answer.state).toBe('pending');
    await storage.recordSubmission(message.ref, 0, 'carrier-1', Date.now());
    // The next retry of the held receipt finds it (retries start at 50 ms and double).
    await vi.advanceTimersByTimeAsync(1_000);
    expect(answer.state).toBe('resolved');
    expect(answer.at! - started).toBeGreaterThanOrEqual(100);
    // Answered with the receipt stored: the carrier may forget it now.
    expect(stateWhenAnswered).toBe('delivered');
    expect(transitions.map((t) => t.message.state)).toEqual(['delivered']);
    expect(errors).toEqual([]);
  });

  it('matches at once a receipt whose submission is already recorded, in another spelling of its id', async () => {
    const storage = new MemoryStorage();
    const { handler, transitions } = handlerOn(storage);
    const message = await storedMessage(storage);
    // Storage keeps the normalized spelling (the worker records normalizeCarrierId(ack)).
    await storage.recordSubmission(message.ref, 0, 'a1f', Date.now());
    await handler.receive({ carrierId: String(0xa1f), outcome: DELIVERED });
    expect(transitions.map((t) => t.message.state)).toEqual(['delivered']);
  });

  it('refuses with ReceiptNotYetMatched, after holding it 5 s, a receipt whose submission is never recorded', async () => {
    vi.useFakeTimers();
    const storage = new MemoryStorage();
    const { handler, errors } = handlerOn(storage);
    const answer = track(handler.receive({ carrierId: 'nobody-knows', outcome: DELIVERED }));
    await vi.advanceTimersByTimeAsync(4_900);
    expect(answer.state).toBe('pending');
    await vi.advanceTimersByTimeAsync(200);
    expect(answer.state).toBe('rejected');
    expect(ReceiptNotYetMatched.is(answer.error)).toBe(true);
    expect((answer.error as ReceiptNotYetMatched).carrierId).toBe('nobody-knows');
    // Refusing is the expected way to have it re-sent, not an error.
    expect(errors).toEqual([]);
  });

  it('drops, with an error event, and acknowledges a re-sent receipt once it is unmatched for waitMs since first seen', async () => {
    vi.useFakeTimers();
    const storage = new MemoryStorage();
    const { handler, errors } = handlerOn(storage, 60_000);
    const started = Date.now();
    const receipt = { carrierId: 'never-recorded', outcome: DELIVERED };
    // The carrier re-sends each refused receipt 10 s after the refusal, as an SMSC would.
    const answers: { state: string; at: number }[] = [];
    for (;;) {
      const answer = track(handler.receive(receipt));
      await vi.advanceTimersByTimeAsync(5_000);
      answers.push({ state: answer.state, at: (answer.at ?? Date.now()) - started });
      if (answer.state !== 'rejected') break;
      await vi.advanceTimersByTimeAsync(10_000);
    }
    // Refused at 5, 20, 35 and 50 s; the re-send at 60 s comes a minute after the first was
    // seen and is dropped at once.
    expect(answers).toEqual([
      { state: 'rejected', at: 5_000 },
      { state: 'rejected', at: 20_000 },
      { state: 'rejected', at: 35_000 },
      { state: 'rejected', at: 50_000 },
      { state: 'resolved', at: 60_000 },
    ]);
    expect(errors).toEqual(['Receipt for unknown carrier id "never-recorded" dropped: unmatched for 60000 ms since it was first seen']);
  });

  it('holds a re-sent receipt only until waitMs since first seen, then drops it', async () => {
    vi.useFakeTimers();
    const storage = new MemoryStorage();
    const { handler, errors } = handlerOn(storage, 8_000);
    const receipt = { carrierId: 'late-ish', outcome: DELIVERED };
    const first = track(handler.receive(receipt));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(first.state).toBe('rejected');
    const second = track(handler.receive(receipt));
    await vi.advanceTimersByTimeAsync(2_900);
    expect(second.state).toBe('pending');
    await vi.advanceTimersByTimeAsync(200);
    expect(second.state).toBe('resolved');
    expect(errors).toHaveLength(1);
  });

  it('applies a re-sent receipt whose submission was recorded between the refusal and the re-send', async () => {
    vi.useFakeTimers();
    const storage = new MemoryStorage();
    const { handler, transitions, errors } = handlerOn(storage);
    const message = await storedMessage(storage);
    const receipt = { carrierId: 'slow-commit', outcome: DELIVERED };
    const first = track(handler.receive(receipt));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(first.state).toBe('rejected');
    await storage.recordSubmission(message.ref, 0, 'slow-commit', Date.now());
    await handler.receive(receipt);
    expect(transitions.map((t) => t.message.state)).toEqual(['delivered']);
    expect(errors).toEqual([]);
  });

  it('holds a receipt that matched a finished part for the recheck, and applies it to a new message with a reused id', async () => {
    vi.useFakeTimers();
    const storage = new MemoryStorage();
    const { handler, transitions } = handlerOn(storage);
    const old = await storedMessage(storage);
    await storage.recordSubmission(old.ref, 0, 'reused', Date.now());
    await handler.receive({ carrierId: 'reused', outcome: DELIVERED });
    expect(transitions.map((t) => t.message.ref)).toEqual([old.ref]);

    // The SMSC restarted and issued the id again; the new message's receipt overtakes its recording.
    const fresh = await storedMessage(storage);
    const answer = track(handler.receive({ carrierId: 'reused', outcome: DELIVERED }));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(answer.state).toBe('pending');
    await storage.recordSubmission(fresh.ref, 0, 'reused', Date.now());
    await vi.advanceTimersByTimeAsync(2_000);
    expect(answer.state).toBe('resolved');
    expect(transitions.map((t) => t.message.ref)).toEqual([old.ref, fresh.ref]);
  });

  it('acknowledges a true duplicate after the 5 s recheck, without an error', async () => {
    vi.useFakeTimers();
    const storage = new MemoryStorage();
    const { handler, transitions, errors } = handlerOn(storage);
    const message = await storedMessage(storage);
    await storage.recordSubmission(message.ref, 0, 'twice', Date.now());
    await handler.receive({ carrierId: 'twice', outcome: DELIVERED });
    const duplicate = track(handler.receive({ carrierId: 'twice', outcome: DELIVERED }));
    await vi.advanceTimersByTimeAsync(4_900);
    expect(duplicate.state).toBe('pending');
    await vi.advanceTimersByTimeAsync(200);
    expect(duplicate.state).toBe('resolved');
    expect(transitions).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  it('acknowledges a true duplicate as soon as the worker has recorded what it sent, without the 5 s recheck', async () => {
    vi.useFakeTimers();
    const storage = new MemoryStorage();
    let recorded!: () => void;
    const recordings = new Promise<void>((resolve) => (recorded = resolve));
    const transitions: Transition[] = [];
    const handler = new ReceiptHandler({
      storage, emit: () => {}, now: Date.now, waitMs: 60_000,
      onTransition: (transition) => void transitions.push(transition),
      submissionsRecorded: () => recordings,
    });
    const message = await storedMessage(storage);
    await storage.recordSubmission(message.ref, 0, 'twice', Date.now());
    await handler.receive({ carrierId: 'twice', outcome: DELIVERED });
    const duplicate = track(handler.receive({ carrierId: 'twice', outcome: DELIVERED }));
    await vi.advanceTimersByTimeAsync(100);
    // Still waiting for the worker: a part it sent may carry the id again.
    expect(duplicate.state).toBe('pending');
    recorded();
    await vi.advanceTimersByTimeAsync(0);
    expect(duplicate.state).toBe('resolved');
    expect(transitions).toHaveLength(1);
  });

  it('applies, once the worker has recorded it, a receipt that overtook its recording, without a timed retry', async () => {
    vi.useFakeTimers();
    const storage = new MemoryStorage();
    const message = await storedMessage(storage);
    const transitions: Transition[] = [];
    let recordings!: Promise<void>;
    const handler = new ReceiptHandler({
      storage, emit: () => {}, now: Date.now, waitMs: 60_000,
      onTransition: (transition) => void transitions.push(transition),
      submissionsRecorded: () => recordings,
    });
    let record!: () => void;
    recordings = new Promise<void>((resolve) => (record = resolve)).then(async () => {
      await storage.recordSubmission(message.ref, 0, 'early', Date.now());
    });
    const answer = track(handler.receive({ carrierId: 'early', outcome: DELIVERED }));
    await vi.advanceTimersByTimeAsync(10);
    expect(answer.state).toBe('pending');
    record();
    await vi.advanceTimersByTimeAsync(0);
    expect(answer.state).toBe('resolved');
    expect(transitions.map((t) => t.message.state)).toEqual(['delivered']);
  });
});

describe('ReceiptHandler.close', () => {
  it('applies a held receipt whose submission was recorded meanwhile, and then resolves it', async () => {
    const storage = new MemoryStorage();
    const { handler, transitions, errors } = handlerOn(storage);
    const message = await storedMessage(storage);
    // The receipt overtakes the recording of its own submission and is held.
    const answer = track(handler.receive({ carrierId: 'carrier-1', outcome: DELIVERED }));
    await storage.recordSubmission(message.ref, 0, 'carrier-1', Date.now());
    // No macrotask has run since, so the held receipt's first retry (50 ms) has not fired.
    expect(transitions).toEqual([]);
    await handler.close();
    expect(answer.state).toBe('resolved');
    expect(transitions.map((t) => t.message.state)).toEqual(['delivered']);
    expect((await storage.getMessage(message.principalId, message.ref))!.state).toBe('delivered');
    expect(errors).toEqual([]);
  });

  it('refuses a held receipt that still matches nothing, so the carrier re-sends it to the next instance', async () => {
    const storage = new MemoryStorage();
    const { handler, transitions, errors } = handlerOn(storage);
    const answer = handler.receive({ carrierId: 'nobody-knows', outcome: DELIVERED });
    const started = Date.now();
    await handler.close();
    await expect(answer).rejects.toSatisfy(ReceiptNotYetMatched.is);
    // At once, not after the hold.
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(transitions).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('tries a receipt that arrives after close once: applied if it matches, refused if not', async () => {
    const storage = new MemoryStorage();
    const { handler, transitions } = handlerOn(storage);
    const message = await storedMessage(storage);
    await storage.recordSubmission(message.ref, 0, 'known', Date.now());
    await handler.close();
    await handler.receive({ carrierId: 'known', outcome: DELIVERED });
    expect(transitions.map((t) => t.message.state)).toEqual(['delivered']);
    // A duplicate is not rechecked any more: the worker has recorded everything it will.
    await handler.receive({ carrierId: 'known', outcome: DELIVERED });
    await expect(handler.receive({ carrierId: 'unknown', outcome: DELIVERED })).rejects.toSatisfy(ReceiptNotYetMatched.is);
  });

  it('passes a storage failure to the adapter as a rejection that is not ReceiptNotYetMatched', async () => {
    const storage = new MemoryStorage();
    storage.applyReceipt = async () => {
      throw new Error('storage down');
    };
    const { handler } = handlerOn(storage);
    const error = await handler.receive({ carrierId: 'x', outcome: DELIVERED }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(ReceiptNotYetMatched.is(error)).toBe(false);
  });
});

/**
 * The simulated carrier re-sends a receipt its handler refused, as a real carrier re-sends
 * a deliver_sm answered with an error: a second later, a bounded number of times. Fake
 * timers drive the delays.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SimulatorDelivery } from '../../src/delivery/simulator.js';
import { ReceiptNotYetMatched, type CarrierReceipt, type OutgoingPart } from '../../src/delivery/contract.js';

const part: OutgoingPart = {
  ref: 'ref-1',
  principalId: 'p1',
  profileCode: '12345',
  sender: 'ACME',
  recipient: '254712345678',
  text: 'Hello',
  partText: 'Hello',
  index: 0,
  count: 1,
  concatRef: 7,
  encoding: 'GSM-7',
  messageType: 1,
  reqType: 1,
};

const opened: SimulatorDelivery[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

/** A simulator whose receipt handler answers with `answer(n)` for the n-th delivery (1-based). */
async function carrierAnswering(answer: (delivery: number) => Error | null) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
  const simulator = new SimulatorDelivery({ latencyMs: 0 });
  opened.push(simulator);
  const deliveries: { receipt: CarrierReceipt; at: number }[] = [];
  const errors: unknown[] = [];
  const started = Date.now();
  await simulator.start({
    receipt: async (receipt) => {
      deliveries.push({ receipt, at: Date.now() - started });
      const error = answer(deliveries.length);
      if (error) throw error;
    },
    inbound: async () => {},
    error: (error) => errors.push(error),
  });
  return { simulator, deliveries, errors };
}

describe('SimulatorDelivery re-sends refused receipts', () => {
  it('sends a receipt refused as not yet matched again a second later, until it is accepted, reporting no error', async () => {
    const { simulator, deliveries, errors } = await carrierAnswering((n) => (n <= 2 ? new ReceiptNotYetMatched('x') : null));
    const ack = await simulator.submit(part);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(deliveries.map((d) => d.at)).toEqual([0, 1_000, 2_000]);
    expect(deliveries.every((d) => d.receipt.carrierId === ack.carrierId)).toBe(true);
    expect(errors).toEqual([]);
    expect(simulator.pendingReceipts).toBe(0);
  });

  it('re-sends after any other refusal too, and reports that one through handlers.error', async () => {
    const failure = new Error('storage down');
    const { simulator, deliveries, errors } = await carrierAnswering((n) => (n === 1 ? failure : null));
    await simulator.submit(part);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(deliveries).toHaveLength(2);
    expect(errors).toEqual([failure]);
  });

  it('gives up after 20 re-sends', async () => {
    const { simulator, deliveries } = await carrierAnswering(() => new ReceiptNotYetMatched('x'));
    await simulator.submit(part);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(deliveries).toHaveLength(21);
    expect(simulator.pendingReceipts).toBe(0);
  });

  it('sends a pending re-send at once on close, and not again if it is refused then', async () => {
    const { simulator, deliveries } = await carrierAnswering(() => new ReceiptNotYetMatched('x'));
    await simulator.submit(part);
    await vi.advanceTimersByTimeAsync(0);
    expect(deliveries).toHaveLength(1);
    expect(simulator.pendingReceipts).toBe(1);
    await simulator.close();
    expect(deliveries.map((d) => d.at)).toEqual([0, 0]);
    expect(simulator.pendingReceipts).toBe(0);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(deliveries).toHaveLength(2);
  });
});

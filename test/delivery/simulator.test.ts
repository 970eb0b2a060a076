import { afterEach, describe, it, expect, vi } from 'vitest';
import { SimulatorDelivery, type SimulatorOptions } from '../../src/delivery/simulator.js';
import { DeliveryError, type CarrierReceipt, type OutgoingPart } from '../../src/delivery/contract.js';
import { carrierIdSpellings, normalizeCarrierId } from '../../src/delivery/carrier-ids.js';
import { countSms, splitSms } from '../../src/sms/segments.js';

/** The parts of one message, as the worker would build them. */
function partsOf(text: string, ref = 'ref-1'): OutgoingPart[] {
  const { encoding } = countSms(text);
  const texts = splitSms(text);
  return texts.map((partText, index) => ({
    ref,
    principalId: 'p1',
    profileCode: '12345',
    sender: 'ACME',
    recipient: '254712345678',
    text,
    partText,
    index,
    count: texts.length,
    concatRef: 7,
    encoding,
    messageType: 1,
    reqType: 1,
  }));
}

const onePart = (ref: string) => partsOf('Hello', ref)[0]!;

/** A started simulator that records what it reports. */
async function startSimulator(options: SimulatorOptions) {
  const simulator = new SimulatorDelivery(options);
  const receipts: CarrierReceipt[] = [];
  const errors: unknown[] = [];
  const waiting: { count: number; resolve: () => void }[] = [];
  await simulator.start({
    receipt: async (receipt) => {
      receipts.push(receipt);
      for (const w of waiting) if (receipts.length >= w.count) w.resolve();
    },
    inbound: async () => {},
    error: (error) => errors.push(error),
  });
  /** Resolves once `count` receipts came, or fails after a deadline. */
  const receiptsReach = (count: number, deadlineMs = 5000) =>
    new Promise<void>((resolve, reject) => {
      if (receipts.length >= count) return resolve();
      const timer = setTimeout(() => reject(new Error(`only ${receipts.length} of ${count} receipts`)), deadlineMs);
      waiting.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
    });
  opened.push(simulator);
  return { simulator, receipts, errors, receiptsReach };
}

const opened: SimulatorDelivery[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

/** What happened to each of `n` submits: the rejection's kind, or the receipt's reason. */
async function runScenario(options: SimulatorOptions, n: number): Promise<string[]> {
  const { simulator, receipts, receiptsReach } = await startSimulator({ latencyMs: 0, ...options });
  const results = await Promise.allSettled(Array.from({ length: n }, (_, i) => simulator.submit(onePart(`r${i}`))));
  const accepted = results.filter((r) => r.status === 'fulfilled').length;
  await receiptsReach(accepted);
  const byId = new Map(receipts.map((r) => [r.carrierId, r.outcome.reason]));
  return results.map((r) => {
    if (r.status === 'rejected') {
      const error = r.reason as DeliveryError;
      return error.permanent ? `refused:${error.outcome?.reason}` : 'retry';
    }
    return byId.get(r.value.carrierId) ?? 'no receipt';
  });
}

describe('SimulatorDelivery', () => {
  const mix: SimulatorOptions['outcomes'] = {
    delivered: 5,
    absent_subscriber: 1,
    delivery_impossible: 1,
    expired: 1,
    sender_name_blacklisted: 1,
    invalid_source_address: 1,
    rejected: 1,
    throttled: 1,
  };

  it('makes the same choices for the same seed', async () => {
    const first = await runScenario({ seed: 42, outcomes: mix }, 60);
    const second = await runScenario({ seed: 42, outcomes: mix }, 60);
    const other = await runScenario({ seed: 43, outcomes: mix }, 60);
    expect(second).toEqual(first);
    expect(other).not.toEqual(first);
    expect(new Set(first).size).toBeGreaterThan(3);
  });

  it('honours the outcome weights, roughly', async () => {
    const results = await runScenario({ seed: 7, outcomes: { delivered: 3, absent_subscriber: 1 } }, 400);
    const delivered = results.filter((r) => r === 'delivered_to_terminal').length;
    const absent = results.filter((r) => r === 'absent_subscriber').length;
    expect(delivered + absent).toBe(400);
    expect(delivered).toBeGreaterThan(250);
    expect(delivered).toBeLessThan(350);
  });

  it('delivers every part by default', async () => {
    const results = await runScenario({}, 20);
    expect(results).toEqual(Array(20).fill('delivered_to_terminal'));
  });

  it.each([
    ['delivered', 'delivered', 'delivered_to_terminal'],
    ['absent_subscriber', 'undelivered', 'absent_subscriber'],
    ['delivery_impossible', 'undelivered', 'delivery_impossible'],
    ['expired', 'expired', 'expired'],
    ['rejected', 'rejected', 'rejected'],
  ] as const)('reports %s in the receipt as %s / %s', async (name, state, reason) => {
    const { simulator, receipts, receiptsReach } = await startSimulator({ latencyMs: 0, outcomes: { [name]: 1 } });
    const ack = await simulator.submit(onePart('r1'));
    await receiptsReach(1);
    expect(receipts).toEqual([{ carrierId: ack.carrierId, outcome: expect.objectContaining({ state, reason }) }]);
    expect(receipts[0]!.outcome.description.length).toBeGreaterThan(0);
  });

  it.each(['sender_name_blacklisted', 'invalid_source_address'] as const)(
    'refuses a part at submit with a permanent error for %s',
    async (name) => {
      const { simulator } = await startSimulator({ latencyMs: 0, outcomes: { [name]: 1 } });
      const error = await simulator.submit(onePart('r1')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DeliveryError);
      expect(error).toMatchObject({ permanent: true, outcome: { state: 'rejected', reason: name } });
      expect(simulator.submitted).toEqual([]);
      expect(simulator.pendingReceipts).toBe(0);
    },
  );

  it('throttles with a retryable error that says when to retry', async () => {
    const { simulator } = await startSimulator({ outcomes: { throttled: 1 }, retryAfterMs: 250 });
    const error = await simulator.submit(onePart('r1')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect(error).toMatchObject({ permanent: false, outcome: null, retryAfterMs: 250 });
    expect(simulator.pendingReceipts).toBe(0);
  });

  it('gives every part of a long message its own upper-case hex id and its own receipt', async () => {
    const { simulator, receipts, receiptsReach } = await startSimulator({ latencyMs: [0, 5] });
    const parts = partsOf('a'.repeat(400));
    expect(parts).toHaveLength(3);
    const acks = await Promise.all(parts.map((part) => simulator.submit(part)));
    const ids = acks.map((ack) => ack.carrierId);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^[0-9A-F]+$/);
    expect(simulator.submitted.map((p) => p.index)).toEqual([0, 1, 2]);
    await receiptsReach(3);
    expect(receipts.map((r) => r.carrierId).sort()).toEqual([...ids].sort());
  });

  it('keeps only the latest keepSubmitted parts in `submitted`, so a long run does not grow without end', async () => {
    const { simulator } = await startSimulator({ latencyMs: 0, keepSubmitted: 2 });
    for (const ref of ['r1', 'r2', 'r3']) await simulator.submit(onePart(ref));
    expect(simulator.submitted.map((p) => p.ref)).toEqual(['r2', 'r3']);
    const { simulator: byDefault } = await startSimulator({ latencyMs: 0 });
    for (let i = 0; i < 1_005; i++) await byDefault.submit(onePart(`d${i}`));
    expect(byDefault.submitted).toHaveLength(1_000);
    expect(byDefault.submitted[0]!.ref).toBe('d5');
  });

  it('hands out ids that differ between two simulators with the same seed', async () => {
    const a = await startSimulator({ seed: 1, latencyMs: 0 });
    const b = await startSimulator({ seed: 1, latencyMs: 0 });
    const idA = (await a.simulator.submit(onePart('r1'))).carrierId;
    const idB = (await b.simulator.submit(onePart('r1'))).carrierId;
    expect(idA).not.toBe(idB);
  });

  it('can write receipt ids in decimal, which still match the stored hex id', async () => {
    const { simulator, receipts, receiptsReach } = await startSimulator({ latencyMs: 0, decimalReceiptIds: true });
    const ack = await simulator.submit(onePart('r1'));
    await receiptsReach(1);
    const receiptId = receipts[0]!.carrierId;
    expect(receiptId).toMatch(/^[0-9]+$/);
    expect(receiptId).toBe(BigInt(`0x${ack.carrierId}`).toString(10));
    expect(carrierIdSpellings(receiptId)).toContain(normalizeCarrierId(ack.carrierId));
  });

  it('reports every receipt twice when duplicateReceipts is 1', async () => {
    const { simulator, receipts, receiptsReach } = await startSimulator({ latencyMs: 0, duplicateReceipts: 1 });
    const acks = await Promise.all([simulator.submit(onePart('r1')), simulator.submit(onePart('r2'))]);
    await receiptsReach(4);
    for (const ack of acks) expect(receipts.filter((r) => r.carrierId === ack.carrierId)).toHaveLength(2);
  });

  it('reports some receipts twice when duplicateReceipts is 0.5', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { simulator, receipts } = await startSimulator({ seed: 3, latencyMs: 10, duplicateReceipts: 0.5 });
    await Promise.all(Array.from({ length: 100 }, (_, i) => simulator.submit(onePart(`r${i}`))));
    // Fake time: every receipt timer fires, and the duplicates that follow them are flushed.
    await vi.advanceTimersByTimeAsync(10);
    const perId = new Map<string, number>();
    for (const r of receipts) perId.set(r.carrierId, (perId.get(r.carrierId) ?? 0) + 1);
    expect(perId.size).toBe(100);
    const twice = [...perId.values()].filter((n) => n === 2).length;
    expect([...perId.values()].every((n) => n === 1 || n === 2)).toBe(true);
    expect(twice).toBeGreaterThan(30);
    expect(twice).toBeLessThan(70);
  });

  it('holds submits to the tps cap without failing them', async () => {
    const { simulator } = await startSimulator({ tps: 50, latencyMs: 0 });
    const n = 8;
    const started = performance.now();
    const acks = await Promise.all(Array.from({ length: n }, (_, i) => simulator.submit(onePart(`r${i}`))));
    const elapsedMs = performance.now() - started;
    expect(acks).toHaveLength(n);
    expect(elapsedMs).toBeGreaterThanOrEqual(((n - 1) / 50) * 1000);
  });

  it('waits submitLatencyMs before a submit settles', async () => {
    const { simulator } = await startSimulator({ submitLatencyMs: 30, latencyMs: 0 });
    const started = performance.now();
    await simulator.submit(onePart('r1'));
    expect(performance.now() - started).toBeGreaterThanOrEqual(30);
  });

  it('reports a receipt handler failure through handlers.error', async () => {
    const simulator = new SimulatorDelivery({ latencyMs: 0 });
    opened.push(simulator);
    const failure = new Error('storage down');
    const reported = new Promise<unknown>((resolve) => {
      void simulator.start({
        receipt: async () => {
          throw failure;
        },
        inbound: async () => {},
        error: resolve,
      });
    });
    await simulator.submit(onePart('r1'));
    expect(await reported).toBe(failure);
  });

  it('refuses submit before start', async () => {
    const simulator = new SimulatorDelivery();
    await expect(simulator.submit(onePart('r1'))).rejects.toThrow(/before start/);
  });
});

describe('SimulatorDelivery.close', () => {
  it('reports every receipt it still holds before it resolves, and nothing after', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { simulator, receipts } = await startSimulator({ latencyMs: 1000 });
    const early = await simulator.submit(onePart('r1'));
    await vi.advanceTimersByTimeAsync(1000);
    expect(receipts).toHaveLength(1);

    const late = await Promise.all(['r2', 'r3', 'r4'].map((ref) => simulator.submit(onePart(ref))));
    expect(simulator.pendingReceipts).toBe(3);
    await simulator.close();
    expect(simulator.pendingReceipts).toBe(0);
    expect(receipts.map((r) => r.carrierId)).toEqual([early, ...late].map((ack) => ack.carrierId));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(receipts).toHaveLength(4);
  });

  it('resolves close() only once the receipts it reports are recorded', async () => {
    const simulator = new SimulatorDelivery({ latencyMs: 60_000 });
    opened.push(simulator);
    const recorded: string[] = [];
    await simulator.start({
      receipt: async (receipt) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        recorded.push(receipt.carrierId);
      },
      inbound: async () => {},
      error: () => {},
    });
    const acks = await Promise.all(['r1', 'r2'].map((ref) => simulator.submit(onePart(ref))));
    await simulator.close();
    expect(recorded.sort()).toEqual(acks.map((ack) => ack.carrierId).sort());
  });

  it('rejects submit afterwards, and submits still waiting for their turn', async () => {
    const { simulator } = await startSimulator({ tps: 1, latencyMs: 0 });
    await simulator.submit(onePart('r1'));
    const waiting = simulator.submit(onePart('r2'));
    await simulator.close();
    await expect(waiting).rejects.toBeInstanceOf(DeliveryError);
    await expect(simulator.submit(onePart('r3'))).rejects.toMatchObject({ permanent: false });
    expect(simulator.submitted).toHaveLength(1);
  });

  it('never keeps the process alive with its timers', async () => {
    const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timeouts();
    const { simulator } = await startSimulator({ latencyMs: 60_000, tps: 1 });
    await simulator.submit(onePart('r1'));
    const waiting = simulator.submit(onePart('r2')).catch(() => 'closed');
    expect(simulator.pendingReceipts).toBe(1);
    expect(timeouts()).toBe(before);
    await simulator.close();
    expect(await waiting).toBe('closed');
  });

  it('is idempotent', async () => {
    const { simulator } = await startSimulator({});
    await simulator.close();
    await expect(simulator.close()).resolves.toBeUndefined();
  });
});

describe('SimulatorDelivery.receiptDeadlineMs', () => {
  it('is the longest latency plus a minute by default, for the router to end a message whose receipt died with the process', () => {
    expect(new SimulatorDelivery().receiptDeadlineMs).toBe(200 + 60_000);
    expect(new SimulatorDelivery({ latencyMs: [200, 1500] }).receiptDeadlineMs).toBe(1500 + 60_000);
    expect(new SimulatorDelivery({ latencyMs: 50, receiptDeadlineMs: 2_000 }).receiptDeadlineMs).toBe(2_000);
  });

  it('may not be shorter than the longest latency: every receipt would come too late', () => {
    expect(() => new SimulatorDelivery({ latencyMs: [100, 5_000], receiptDeadlineMs: 1_000 })).toThrow(
      /receiptDeadlineMs \(1000\) must be at least the longest latencyMs \(5000\)/,
    );
    expect(() => new SimulatorDelivery({ receiptDeadlineMs: 0 })).toThrow(/receiptDeadlineMs must be a number >= 1/);
  });
});

describe('SimulatorDelivery options', () => {
  it('throws at construction on a misspelt option, with a hint', () => {
    expect(() => new SimulatorDelivery({ latency: 5 } as SimulatorOptions)).toThrow(/did you mean `latencyMs`/i);
    expect(() => new SimulatorDelivery({ outcomes: { deliverd: 1 } } as SimulatorOptions)).toThrow(
      /did you mean `delivered`/i,
    );
  });

  it('throws on values that make no sense', () => {
    expect(() => new SimulatorDelivery({ tps: 0 })).toThrow(TypeError);
    expect(() => new SimulatorDelivery({ latencyMs: [200, 20] })).toThrow(TypeError);
    expect(() => new SimulatorDelivery({ latencyMs: -1 })).toThrow(TypeError);
    expect(() => new SimulatorDelivery({ outcomes: { delivered: 0 } })).toThrow(/at least one outcome/);
    expect(() => new SimulatorDelivery({ outcomes: { delivered: -1 } })).toThrow(TypeError);
    expect(() => new SimulatorDelivery({ duplicateReceipts: 1.5 })).toThrow(/probability/);
    expect(() => new SimulatorDelivery({ keepSubmitted: -1 })).toThrow(TypeError);
    expect(() => new SimulatorDelivery({ keepSubmitted: 2.5 })).toThrow(TypeError);
  });
});

/**
 * What the SMPP adapter's tests against a real SMSC (the `smpp` package's server, in a child
 * process) share: the SMSC, handlers that record what the adapter reports, and parts.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { SmppDelivery } from '../../src/delivery/smpp/adapter.js';
import type { SmppDeliveryOptions } from '../../src/delivery/smpp/options.js';
import {
  DeliveryError,
  type CarrierReceipt,
  type DeliveryHandlers,
  type InboundMessage,
  type OutgoingPart,
} from '../../src/delivery/contract.js';
import { countSms, splitSms } from '../../src/sms/segments.js';
import { outgoingPart } from '../fixtures/parts.js';
import { startSmsc, type SmscEvent, type SmscHandle } from '../fixtures/smsc.js';

export type SubmitEvent = Extract<SmscEvent, { event: 'submit' }>;
export type DeliverResp = Extract<SmscEvent, { event: 'deliver_resp' }>;

export const isSubmit = (event: SmscEvent): event is SubmitEvent => event.event === 'submit';

/** The test SMSC of the calling test file, set by {@link useSmsc}'s hooks. */
export let smsc: SmscHandle;
const open: SmppDelivery[] = [];

/**
 * Starts one SMSC child for the calling test file, resets its settings before each test
 * and closes the adapters a test started after it.
 */
export function useSmsc(): void {
  beforeAll(async () => {
    smsc = await startSmsc({ password: 'secret' });
  });

  afterAll(async () => {
    await smsc?.stop();
  });

  beforeEach(async () => {
    await smsc.send({ cmd: 'set', password: 'secret', receiptMode: 'manual', receiptIdForm: 'hex', hold: false });
  });

  afterEach(async () => {
    await Promise.all(open.splice(0).map((adapter) => adapter.close()));
  });
}

/** Handlers that record what the adapter reports, with a way to wait for it. */
export function recorder() {
  const receipts: CarrierReceipt[] = [];
  const inbound: InboundMessage[] = [];
  const errors: Error[] = [];
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of [...listeners]) listener();
  };
  let receiptGate: ((receipt: CarrierReceipt) => Promise<void>) | null = null;
  const handlers: DeliveryHandlers = {
    async receipt(receipt) {
      receipts.push(receipt);
      notify();
      if (receiptGate) await receiptGate(receipt);
    },
    async inbound(message) {
      inbound.push(message);
      notify();
    },
    error(error) {
      errors.push(error as Error);
      notify();
    },
  };
  /** Resolves when `condition` holds; rejects after `timeoutMs`. */
  function until(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!condition()) return;
        clearTimeout(timer);
        listeners.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`not seen within ${timeoutMs} ms: ${what}; errors: ${errors.map((e) => e.message).join(' | ')}`));
      }, timeoutMs);
      listeners.add(check);
      check();
    });
  }
  return {
    receipts,
    inbound,
    errors,
    handlers,
    until,
    gateReceipts(gate: (receipt: CarrierReceipt) => Promise<void>) {
      receiptGate = gate;
    },
  };
}

export async function startAdapter(
  options: Partial<SmppDeliveryOptions> = {},
  record = recorder(),
): Promise<{ adapter: SmppDelivery; record: ReturnType<typeof recorder> }> {
  const adapter = new SmppDelivery({
    url: `smpp://tester:secret@127.0.0.1:${smsc.port}`,
    reconnectMinMs: 20,
    reconnectMaxMs: 200,
    waitTimeoutMs: 5_000,
    responseTimeoutMs: 5_000,
    ...options,
  });
  open.push(adapter);
  await adapter.start(record.handlers);
  return { adapter, record };
}

let refs = 0;
export function part(overrides: Partial<OutgoingPart> = {}): OutgoingPart {
  const text = overrides.partText ?? 'Hello from the test';
  return outgoingPart({ ref: `m${++refs}`, principalId: 'p1', profileCode: 'DEFAULT', text, concatRef: 42, ...overrides });
}

/** The parts of `text` as the worker would build them. */
export function partsOf(text: string, concatRef: number): OutgoingPart[] {
  const { encoding } = countSms(text);
  const texts = splitSms(text);
  return texts.map((partText, index) => part({ text, partText, index, count: texts.length, concatRef, encoding }));
}

/** The first `n` submits the SMSC saw from event index `from` on, once it has seen them. */
export async function submitsSince(from: number, n: number): Promise<SubmitEvent[]> {
  await smsc.waitFor(() => smsc.events.slice(from).filter(isSubmit).length >= n, 5_000, from);
  return smsc.events.slice(from).filter(isSubmit).slice(0, n);
}

export async function rejection(promise: Promise<unknown>): Promise<DeliveryError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(DeliveryError);
  return error as DeliveryError;
}

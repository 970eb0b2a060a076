/**
 * The SMPP adapter against a real SMSC (the `smpp` package's server, in a child process):
 * binding, submits, receipts, throttling, drops, concatenation, MO and unbind.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
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

type SubmitEvent = Extract<SmscEvent, { event: 'submit' }>;
type DeliverResp = Extract<SmscEvent, { event: 'deliver_resp' }>;

const isSubmit = (event: SmscEvent): event is SubmitEvent => event.event === 'submit';

let smsc: SmscHandle;
const open: SmppDelivery[] = [];

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

/** Handlers that record what the adapter reports, with a way to wait for it. */
function recorder() {
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

async function startAdapter(
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
function part(overrides: Partial<OutgoingPart> = {}): OutgoingPart {
  const text = overrides.partText ?? 'Hello from the test';
  return outgoingPart({ ref: `m${++refs}`, principalId: 'p1', profileCode: 'DEFAULT', text, concatRef: 42, ...overrides });
}

/** The parts of `text` as the worker would build them. */
function partsOf(text: string, concatRef: number): OutgoingPart[] {
  const { encoding } = countSms(text);
  const texts = splitSms(text);
  return texts.map((partText, index) => part({ text, partText, index, count: texts.length, concatRef, encoding }));
}

/** The first `n` submits the SMSC saw from event index `from` on, once it has seen them. */
async function submitsSince(from: number, n: number): Promise<SubmitEvent[]> {
  await smsc.waitFor(() => smsc.events.slice(from).filter(isSubmit).length >= n, 5_000, from);
  return smsc.events.slice(from).filter(isSubmit).slice(0, n);
}

async function rejection(promise: Promise<unknown>): Promise<DeliveryError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(DeliveryError);
  return error as DeliveryError;
}

describe('SmppDelivery against a real SMSC', () => {
  it('binds as a transceiver and returns the carrier id of each submit', async () => {
    const from = smsc.events.length;
    const { adapter } = await startAdapter();
    await adapter.waitForBind();
    expect(adapter.bound).toBe(true);
    await smsc.waitFor((e) => e.event === 'bind' && e.mode === 'transceiver' && e.ok, 5_000, from);

    const ack = await adapter.submit(part({ partText: 'Hello there' }));
    const submitted = await smsc.waitFor(isSubmit, 5_000, from);
    expect(ack.carrierId).toBe(submitted.id);
    expect(submitted).toMatchObject({
      text: 'Hello there',
      sourceAddr: 'ACME',
      sourceTon: 5,
      sourceNpi: 0,
      destinationAddr: '254700000001',
      destTon: 1,
      destNpi: 1,
      esmClass: 0,
      dataCoding: 0,
      registeredDelivery: 1,
      udh: null,
      sar: null,
    });
  });

  it('sends a numeric sender of up to 8 digits as a short code and a longer one as international', async () => {
    const from = smsc.events.length;
    const { adapter } = await startAdapter();
    await adapter.submit(part({ sender: '22141' }));
    await adapter.submit(part({ sender: '+254711000000' }));
    const submits = await submitsSince(from, 2);
    expect(submits.map((s) => [s.sourceAddr, s.sourceTon, s.sourceNpi])).toEqual([
      ['22141', 3, 0],
      ['254711000000', 1, 1],
    ]);
  });

  it('refuses an alphanumeric sender longer than 11 characters as a permanent invalid source', async () => {
    const { adapter } = await startAdapter();
    const error = await rejection(adapter.submit(part({ sender: 'TWELVE_CHARS' })));
    expect(error.permanent).toBe(true);
    expect(error.outcome).toMatchObject({ state: 'rejected', reason: 'invalid_source_address' });
  });

  it('reports a wrong password clearly, keeps retrying, and binds once the SMSC accepts', async () => {
    await smsc.send({ cmd: 'set', password: 'changed' });
    const from = smsc.events.length;
    const { adapter, record } = await startAdapter();
    await record.until(() => record.errors.some((e) => /SMPP bind failed: ESME_RINVPASWD/.test(e.message)), 'bind error');
    // A second refused bind proves it retries after the failure.
    await smsc.waitFor((e) => e.event === 'bind' && !e.ok && smsc.events.slice(from).filter((x) => x.event === 'bind').length >= 2, 5_000, from);
    expect(adapter.bound).toBe(false);

    await smsc.send({ cmd: 'set', password: 'secret' });
    await adapter.waitForBind(5_000);
    const ack = await adapter.submit(part());
    expect(ack.carrierId).toMatch(/^[0-9A-F]+$/);
  });

  it('waits for the bind when submitting before it, and rejects retryably when none comes in time', async () => {
    const { adapter: early } = await startAdapter();
    // Not awaited bind: the submit itself waits for it.
    await expect(early.submit(part())).resolves.toMatchObject({ carrierId: expect.any(String) });

    await smsc.send({ cmd: 'set', password: 'changed' });
    const { adapter: refused } = await startAdapter({ waitTimeoutMs: 300 });
    const error = await rejection(refused.submit(part()));
    expect(error.permanent).toBe(false);
    expect(error.message).toMatch(/not bound/);
  });

  it('reports an immediate receipt with the carrier id as written', async () => {
    await smsc.send({ cmd: 'set', receiptMode: 'auto' });
    const { adapter, record } = await startAdapter();
    const ack = await adapter.submit(part());
    await record.until(() => record.receipts.length === 1, 'receipt');
    expect(record.receipts[0]).toEqual({
      carrierId: ack.carrierId,
      outcome: { state: 'delivered', reason: 'delivered_to_terminal', description: 'Message delivered to terminal' },
    });
  });

  it('reports delayed receipts out of order and duplicated, each one answered', async () => {
    const from = smsc.events.length;
    const { adapter, record } = await startAdapter();
    const acks = [];
    for (let i = 0; i < 3; i++) acks.push(await adapter.submit(part({ recipient: `25470000010${i}` })));
    const [a, b, c] = acks.map((ack) => ack.carrierId) as [string, string, string];
    expect(record.receipts).toEqual([]);

    await smsc.send({ cmd: 'receipt', id: c, stat: 'UNDELIV', err: '027', tag: 'c' });
    await smsc.send({ cmd: 'receipt', id: a, stat: 'DELIVRD', tag: 'a' });
    await smsc.send({ cmd: 'receipt', id: b, stat: 'EXPIRED', tag: 'b' });
    await smsc.send({ cmd: 'receipt', id: a, stat: 'DELIVRD', tag: 'a2' });
    await record.until(() => record.receipts.length === 4, 'four receipts');
    expect(record.receipts.map((r) => [r.carrierId, r.outcome.state, r.outcome.reason])).toEqual([
      [c, 'undelivered', 'absent_subscriber'],
      [a, 'delivered', 'delivered_to_terminal'],
      [b, 'expired', 'expired'],
      [a, 'delivered', 'delivered_to_terminal'],
    ]);
    for (const tag of ['a', 'b', 'c', 'a2']) {
      const resp = await smsc.waitFor((e): e is DeliverResp => e.event === 'deliver_resp' && e.tag === tag, 5_000, from);
      expect(resp.status).toBe(0);
    }
  });

  it('passes a receipt id written in decimal through unchanged, for the core to match', async () => {
    await smsc.send({ cmd: 'set', receiptMode: 'auto', receiptIdForm: 'decimal' });
    const { adapter, record } = await startAdapter();
    const ack = await adapter.submit(part());
    await record.until(() => record.receipts.length === 1, 'receipt');
    const receipt = record.receipts[0]!;
    expect(receipt.carrierId).toBe(BigInt(`0x${ack.carrierId}`).toString(10));
    expect(receipt.carrierId).not.toBe(ack.carrierId);
  });

  it('prefers the receipted_message_id and message_state TLVs over the text', async () => {
    const { adapter, record } = await startAdapter();
    const ack = await adapter.submit(part());
    await smsc.send({ cmd: 'receipt', id: ack.carrierId, stat: 'DELIVRD', textId: 'garbage', tlvId: ack.carrierId, messageState: 5 });
    await record.until(() => record.receipts.length === 1, 'receipt');
    expect(record.receipts[0]).toMatchObject({
      carrierId: ack.carrierId,
      outcome: { state: 'undelivered', reason: 'delivery_impossible' },
    });
  });

  it('does not report an intermediate ACCEPTD receipt, but still answers it', async () => {
    const from = smsc.events.length;
    const { adapter, record } = await startAdapter();
    const ack = await adapter.submit(part());
    await smsc.send({ cmd: 'receipt', id: ack.carrierId, stat: 'ACCEPTD', tag: 'acceptd' });
    await smsc.send({ cmd: 'receipt', id: ack.carrierId, stat: 'REJECTD', tag: 'final' });
    await smsc.waitFor((e) => e.event === 'deliver_resp' && e.tag === 'acceptd' && e.status === 0, 5_000, from);
    await record.until(() => record.receipts.length === 1, 'final receipt');
    expect(record.receipts).toHaveLength(1);
    expect(record.receipts[0]!.outcome).toMatchObject({ state: 'rejected', reason: 'rejected' });
  });

  it('answers deliver_sm only after the receipt handler resolves, and with ESME_RX_T_APPN when it throws', async () => {
    const from = smsc.events.length;
    const record = recorder();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    record.gateReceipts(async (receipt) => {
      if (receipt.outcome.state === 'expired') throw new Error('storage down');
      await released;
    });
    const { adapter } = await startAdapter({}, record);
    const ack = await adapter.submit(part());

    await smsc.send({ cmd: 'receipt', id: ack.carrierId, stat: 'DELIVRD', tag: 'slow' });
    await record.until(() => record.receipts.length === 1, 'handler called');
    // A submit's round trip on the same connection: an early answer would have arrived first.
    const barrier = smsc.events.length;
    await adapter.submit(part());
    await smsc.waitFor(isSubmit, 5_000, barrier);
    expect(smsc.events.slice(from).some((e) => e.event === 'deliver_resp' && e.tag === 'slow')).toBe(false);
    release();
    const answered = await smsc.waitFor((e): e is DeliverResp => e.event === 'deliver_resp' && e.tag === 'slow', 5_000, from);
    expect(answered.status).toBe(0);

    await smsc.send({ cmd: 'receipt', id: ack.carrierId, stat: 'EXPIRED', tag: 'throws' });
    const refused = await smsc.waitFor((e): e is DeliverResp => e.event === 'deliver_resp' && e.tag === 'throws', 5_000, from);
    expect(refused.status).toBe(0x64);
    expect(record.errors.some((e) => /handler failed/.test(e.message))).toBe(true);
  });

  it('rejects ESME_RTHROTTLED and ESME_RMSGQFUL as retryable with a retry delay', async () => {
    await smsc.send({ cmd: 'status', destination: '254700000058', status: 0x58 });
    await smsc.send({ cmd: 'status', destination: '254700000014', status: 0x14 });
    try {
      const { adapter } = await startAdapter();
      for (const recipient of ['254700000058', '254700000014']) {
        const error = await rejection(adapter.submit(part({ recipient })));
        expect(error.permanent).toBe(false);
        expect(error.retryAfterMs).toBe(1_000);
        expect(error.message).toMatch(/ESME_RTHROTTLED|ESME_RMSGQFUL/);
      }
      // The bind survives a refusal.
      await expect(adapter.submit(part())).resolves.toMatchObject({ carrierId: expect.any(String) });
    } finally {
      await smsc.send({ cmd: 'status', destination: '254700000058', status: 0 });
      await smsc.send({ cmd: 'status', destination: '254700000014', status: 0 });
    }
  });

  it('rejects a permanent refusal as permanent, with the outcome the message ends in', async () => {
    await smsc.send({ cmd: 'status', destination: '254700000011', status: 0x0b });
    await smsc.send({ cmd: 'status', destination: '254700000010', status: 0x0a });
    try {
      const { adapter } = await startAdapter();
      const badDestination = await rejection(adapter.submit(part({ recipient: '254700000011' })));
      expect(badDestination.permanent).toBe(true);
      expect(badDestination.message).toMatch(/ESME_RINVDSTADR/);
      expect(badDestination.outcome).toMatchObject({ state: 'rejected', reason: 'delivery_impossible' });
      const badSource = await rejection(adapter.submit(part({ recipient: '254700000010' })));
      expect(badSource.outcome).toMatchObject({ state: 'rejected', reason: 'invalid_source_address' });
    } finally {
      await smsc.send({ cmd: 'status', destination: '254700000011', status: 0 });
      await smsc.send({ cmd: 'status', destination: '254700000010', status: 0 });
    }
  });

  it('rejects in-flight submits retryably when the SMSC drops the connection, then reconnects', async () => {
    const { adapter, record } = await startAdapter();
    await adapter.waitForBind();
    await smsc.send({ cmd: 'set', hold: true });
    const from = smsc.events.length;
    const inFlight = [0, 1, 2].map((i) => adapter.submit(part({ recipient: `25470000020${i}` })));
    const outcomes = Promise.allSettled(inFlight);
    await submitsSince(from, 3);

    await smsc.send({ cmd: 'drop' });
    for (const settled of await outcomes) {
      expect(settled.status).toBe('rejected');
      const error = (settled as PromiseRejectedResult).reason as DeliveryError;
      expect(error).toBeInstanceOf(DeliveryError);
      expect(error.permanent).toBe(false);
    }
    expect(record.errors.some((e) => /connection lost|failed/.test(e.message))).toBe(true);

    await smsc.send({ cmd: 'set', hold: false });
    await adapter.waitForBind(5_000);
    const ack = await adapter.submit(part());
    expect(ack.carrierId).toMatch(/^[0-9A-F]+$/);
  });

  it('keeps at most `window` submits in flight', async () => {
    const { adapter } = await startAdapter({ window: 2 });
    await adapter.waitForBind();
    await smsc.send({ cmd: 'set', hold: true });
    const from = smsc.events.length;
    const pending = [0, 1, 2, 3].map((i) => adapter.submit(part({ recipient: `25470000030${i}` })));
    await submitsSince(from, 2);
    // A round trip on the control channel gives a third submit the time to show up.
    await smsc.send({ cmd: 'set' });
    expect(smsc.events.slice(from).filter(isSubmit)).toHaveLength(2);
    await smsc.send({ cmd: 'set', hold: false });
    const acks = await Promise.all(pending);
    expect(new Set(acks.map((a) => a.carrierId)).size).toBe(4);
  });

  it('sends a 400-character GSM text split in 3 parts as 3 submit_sm with a concatenation UDH', async () => {
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(9).slice(0, 400);
    const parts = partsOf(text, 0x2a);
    expect(parts).toHaveLength(3);
    expect(parts[0]!.encoding).toBe('GSM-7');
    const from = smsc.events.length;
    const { adapter } = await startAdapter();
    const acks = [];
    for (const p of parts) acks.push(await adapter.submit(p));
    expect(new Set(acks.map((a) => a.carrierId)).size).toBe(3);
    const submits = await submitsSince(from, 3);
    expect(submits.map((s) => s.udh)).toEqual(['00032a0301', '00032a0302', '00032a0303']);
    for (const s of submits) {
      expect(s.esmClass & 0x40).toBe(0x40);
      expect(s.dataCoding).toBe(0);
    }
    expect(submits.map((s) => s.text).join('')).toBe(text);
  });

  it('sends a 140-unit emoji text as 3 UCS-2 parts with a concatenation UDH', async () => {
    const text = '\uD83D\uDE00'.repeat(70);
    const parts = partsOf(text, 7);
    expect(parts).toHaveLength(3);
    expect(parts[0]!.encoding).toBe('UCS-2');
    const from = smsc.events.length;
    const { adapter } = await startAdapter();
    for (const p of parts) await adapter.submit(p);
    const submits = await submitsSince(from, 3);
    expect(submits.map((s) => s.udh)).toEqual(['0003070301', '0003070302', '0003070303']);
    expect(submits.map((s) => s.dataCoding)).toEqual([8, 8, 8]);
    expect(submits.map((s) => s.text).join('')).toBe(text);
  });

  it('ties parts together with SAR TLVs when asked, and sends a single part without either', async () => {
    const text = 'x'.repeat(200);
    const from = smsc.events.length;
    const { adapter } = await startAdapter({ concatenation: 'sar' });
    for (const p of partsOf(text, 9)) await adapter.submit(p);
    await adapter.submit(part({ partText: 'single' }));
    const submits = await submitsSince(from, 3);
    expect(submits.map((s) => [s.udh, s.esmClass, s.sar])).toEqual([
      [null, 0, { ref: 9, total: 2, seq: 1 }],
      [null, 0, { ref: 9, total: 2, seq: 2 }],
      [null, 0, null],
    ]);
  });

  it('reports mobile-originated messages, GSM and UCS-2, to the inbound handler', async () => {
    const from = smsc.events.length;
    const { adapter, record } = await startAdapter();
    await adapter.waitForBind();
    const before = Date.now();
    await smsc.send({ cmd: 'mo', from: '254700000999', to: '22141', text: 'STOP please', tag: 'mo1' });
    await smsc.send({ cmd: 'mo', from: '254700000998', to: '22141', text: '\u041f\u0440\u0438\u0432\u0435\u0442', ucs2: true, tag: 'mo2' });
    await record.until(() => record.inbound.length === 2, 'two MO messages');
    expect(record.inbound.map(({ from, to, text }) => ({ from, to, text }))).toEqual([
      { from: '254700000999', to: '22141', text: 'STOP please' },
      { from: '254700000998', to: '22141', text: '\u041f\u0440\u0438\u0432\u0435\u0442' },
    ]);
    expect(record.inbound[0]!.receivedAt).toBeGreaterThanOrEqual(before);
    await smsc.waitFor((e) => e.event === 'deliver_resp' && e.tag === 'mo2' && e.status === 0, 5_000, from);
  });

  it('works with separate transmitter and receiver binds', async () => {
    await smsc.send({ cmd: 'set', receiptMode: 'auto' });
    const from = smsc.events.length;
    const { adapter, record } = await startAdapter({ bindMode: 'separate' });
    const ack = await adapter.submit(part());
    // The SMSC may also hand this receiver a receipt an earlier test's session left undelivered,
    // so wait for this message's own receipt rather than the first one.
    await record.until(() => record.receipts.some((r) => r.carrierId === ack.carrierId), 'receipt over the receiver bind');
    const binds = smsc.events.slice(from).filter((e) => e.event === 'bind').map((e) => (e as { mode: string }).mode);
    expect(binds.sort()).toEqual(['receiver', 'transmitter']);
  });

  it('close() unbinds, the SMSC sees the unbind, and later submits reject', async () => {
    const { adapter, record } = await startAdapter();
    await adapter.waitForBind();
    const from = smsc.events.length;
    await adapter.close();
    await smsc.waitFor((e) => e.event === 'unbind', 5_000, from);
    await smsc.waitFor((e) => e.event === 'session_closed', 5_000, from);
    expect(adapter.bound).toBe(false);
    await rejection(adapter.submit(part()));
    expect(record.errors).toEqual([]);
    await adapter.close();
  });

  it('close() leaves no socket and no timer behind, even mid-reconnect', async () => {
    const sockets = () => process.getActiveResourcesInfo().filter((r) => r.startsWith('TCP')).length;
    // Record the adapter's own timers (unref'd ones are not listed as active resources).
    const timers: NodeJS.Timeout[] = [];
    const real = { setTimeout: globalThis.setTimeout, setInterval: globalThis.setInterval };
    for (const name of ['setTimeout', 'setInterval'] as const) {
      globalThis[name] = ((...args: unknown[]) => {
        const timer = Reflect.apply(real[name], globalThis, args) as NodeJS.Timeout;
        if (new Error().stack?.includes('src/delivery/smpp')) timers.push(timer);
        return timer;
      }) as typeof setTimeout & typeof setInterval;
    }
    try {
      const before = sockets();
      const { adapter, record } = await startAdapter({ enquireLinkMs: 50, reconnectMinMs: 5_000 });
      await adapter.submit(part());
      expect(sockets()).toBeGreaterThan(before);
      await smsc.send({ cmd: 'drop' });
      // Now a reconnect is scheduled, seconds away: close() must cancel it.
      await record.until(() => record.errors.length > 0, 'the drop reported');
      await adapter.close();
      expect(sockets()).toBeLessThanOrEqual(before);
      expect(timers.length).toBeGreaterThan(0);
      const live = timers.filter((timer) => !(timer as unknown as { _destroyed: boolean })._destroyed);
      expect(live).toEqual([]);
    } finally {
      Object.assign(globalThis, real);
    }
  });
});

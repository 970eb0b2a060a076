/**
 * Carrier faults against a real SMSC (the `smpp` package's server, in a child process):
 * the SMSC dies and comes back on the same port, or it throttles every submit for a while.
 * Through the public router, accepted messages stay `queued` while the carrier is out,
 * none ends `failed`, and once it is back each part reaches the SMSC exactly once and
 * every message ends `delivered`.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { SmppDelivery } from '../../src/smpp.js';
import {
  MemoryStorage,
  type ErrorEvent,
  type MessageRetryingEvent,
  type PartReceipt,
  type ReceiptResult,
  type Storage,
  type SubmissionResult,
} from '../../src/index.js';
import { startSmsc, type SmscEvent, type SmscHandle } from '../fixtures/smsc.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';

/** smpp.errors.ESME_RTHROTTLED, written out so the test does not load the library itself. */
const ESME_RTHROTTLED = 0x58;

type Submit = Extract<SmscEvent, { event: 'submit' }>;

interface StatusView {
  message_ref: string;
  recipient: string;
  status: string;
  sms_count: number;
  submit_attempts: number;
}

interface Sent {
  ref: string;
  recipient: string;
  text: string;
  smsCount: number;
}

/** A gateway on a real SMSC, with everything it emitted and every HTTP status it answered. */
interface Harness {
  gateway: TestGateway;
  delivery: SmppDelivery;
  errors: ErrorEvent[];
  retrying: (MessageRetryingEvent & { seenAt: number })[];
  /** The latest state of each message, from `message.status` events. */
  states: Map<string, string>;
  /** Every state each message entered, in order. */
  history: Map<string, string[]>;
  httpStatuses: number[];
}

const smscs: SmscHandle[] = [];
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.gateway.sms.close();
  harness = undefined;
  for (const smsc of smscs.splice(0)) await smsc.stop();
});

async function startSmscWithReceipts(options: { port?: number; firstId?: number } = {}): Promise<SmscHandle> {
  const smsc = await startSmsc({ password: 'secret', ...options });
  smscs.push(smsc);
  await smsc.send({ cmd: 'set', receiptMode: 'auto' });
  return smsc;
}

async function startHarness(port: number, extra: { throttleRetryMs?: number; storage?: Storage } = {}): Promise<Harness> {
  const delivery = new SmppDelivery({
    url: `smpp://gateway:secret@127.0.0.1:${port}`,
    reconnectMinMs: 100,
    reconnectMaxMs: 500,
    waitTimeoutMs: 500,
    ...(extra.throttleRetryMs === undefined ? {} : { throttleRetryMs: extra.throttleRetryMs }),
  });
  const gateway = createGateway({
    ...(extra.storage === undefined ? {} : { storage: extra.storage }),
    delivery,
    worker: { retryBaseMs: 50, retryMaxMs: 300, maxAttempts: 1000, pollIntervalMs: 20 },
    rateLimit: false,
  });
  const h: Harness = { gateway, delivery, errors: [], retrying: [], states: new Map(), history: new Map(), httpStatuses: [] };
  gateway.sms.on('error', (event) => h.errors.push(event));
  gateway.sms.on('message.retrying', (event) => h.retrying.push({ ...event, seenAt: Date.now() }));
  gateway.sms.on('message.status', ({ message }) => {
    h.states.set(message.ref, message.state);
    h.history.set(message.ref, [...(h.history.get(message.ref) ?? []), message.state]);
  });
  harness = h;
  await gateway.sms.ready();
  await delivery.waitForBind(5_000);
  return h;
}

/** Posts one quick-send request; returns the accepted messages. */
async function send(h: Harness, externalId: string, messages: { recipient: string; message: string }[]): Promise<Sent[]> {
  const res = await request(h.gateway.app)
    .post('/api/outbox/create')
    .set('X-API-Key', KEY)
    .send({ profile_code: '12345', messages: messages.map((m) => ({ ...m, external_id: externalId })) });
  h.httpStatuses.push(res.status);
  expect(res.status).toBe(200);
  return (res.body as { message_ref: string; recipient: string; sms_count: number }[]).map((item, i) => ({
    ref: item.message_ref,
    recipient: item.recipient,
    text: messages[i]?.message ?? '',
    smsCount: item.sms_count,
  }));
}

async function statusOf(h: Harness, externalId: string): Promise<Map<string, StatusView>> {
  const res = await request(h.gateway.app).get(`/api/outbox/delivery-status?external_id=${externalId}`).set('X-API-Key', KEY);
  h.httpStatuses.push(res.status);
  expect(res.status).toBe(200);
  return new Map((res.body as StatusView[]).map((view) => [view.message_ref, view]));
}

/**
 * Waits until every line the SMSC wrote so far has been read. It writes a submit's line
 * after answering it (and after its auto receipt), so the gateway can see `delivered`
 * before the test sees the submit; an `ok` comes after every line written before it.
 */
async function settle(smsc: SmscHandle): Promise<void> {
  await smsc.send({ cmd: 'set' });
}

/** Highest `message.retrying` attempt seen for `ref`, 0 if none. */
function retriesOf(h: Harness, ref: string): number {
  return Math.max(0, ...h.retrying.filter((r) => r.ref === ref).map((r) => r.attempt));
}

/** The submits the SMSC accepted (answered with a carrier id). */
function accepted(smsc: SmscHandle): Submit[] {
  return smsc.events.filter((e): e is Submit => e.event === 'submit' && e.id !== null);
}

/** `destination/seq/total` of a submit: its UDH concatenation element, or 1/1 for a single SMS. */
function partKey(submit: Submit): string {
  const udh = submit.udh;
  // 00 03 ref total seq: the last two octets are total and sequence.
  if (udh === null) return `${submit.destinationAddr}/1/1`;
  const total = parseInt(udh.slice(-4, -2), 16);
  const seq = parseInt(udh.slice(-2), 16);
  return `${submit.destinationAddr}/${seq}/${total}`;
}

/** Every part the messages consist of, as {@link partKey} names them. */
function expectedParts(messages: Sent[]): string[] {
  return messages
    .flatMap((m) => Array.from({ length: m.smsCount }, (_, i) => `${m.recipient}/${i + 1}/${m.smsCount}`))
    .sort();
}

/** Checks that `smsc` accepted each part of `messages` exactly once, and that the parts spell each text. */
function expectEachPartOnce(smsc: SmscHandle, messages: Sent[]): void {
  const recipients = new Set(messages.map((m) => m.recipient));
  const submits = accepted(smsc).filter((s) => recipients.has(s.destinationAddr));
  expect(submits.map(partKey).sort()).toEqual(expectedParts(messages));
  for (const m of messages) {
    const parts = submits
      .filter((s) => s.destinationAddr === m.recipient)
      .sort((a, b) => partKey(a).localeCompare(partKey(b), 'en', { numeric: true }));
    expect(parts.map((s) => s.text).join('')).toBe(m.text);
  }
}

/** Twenty messages to twenty numbers: single SMS, 2- and 3-part GSM-7, 2-part UCS-2. */
function outageBatch(): { recipient: string; message: string }[] {
  return Array.from({ length: 20 }, (_, i) => {
    const recipient = `2547100000${String(i).padStart(2, '0')}`;
    const texts = [`short ${i}`, `${i} `.padEnd(200, 'x'), `${i} `.padEnd(400, 'y'), `${i} ${'\u0416'.repeat(100)}`];
    return { recipient, message: texts[i % texts.length] ?? '' };
  });
}

describe('SMPP carrier unreachable (real SMSC)', () => {
  it('keeps messages queued while the SMSC is dead, and sends each part once when it is back on the same port', async () => {
    const first = await startSmscWithReceipts();
    const port = first.port;
    const h = await startHarness(port);

    // 1. The SMSC is up: a message goes out and is delivered.
    const [warmup] = await send(h, 'warmup', [{ recipient: '254712345678', message: 'before the outage' }]);
    if (!warmup) throw new Error('no message accepted');
    await eventually(() => h.states.get(warmup.ref) === 'delivered', { timeoutMs: 5_000 });
    await settle(first);
    expect(accepted(first).map(partKey)).toEqual(['254712345678/1/1']);

    // 2. The SMSC dies. The adapter reports the lost bind; requests are still accepted.
    await first.stop();
    await eventually(() => !h.delivery.bound && h.errors.some((e) => e.source === 'delivery'), { timeoutMs: 5_000 });

    const batch = outageBatch();
    const sent = (
      await Promise.all([0, 5, 10, 15].map((from) => send(h, 'outage', batch.slice(from, from + 5))))
    ).flat();
    expect(sent).toHaveLength(20);
    expect(sent.map((m) => m.smsCount)).toEqual(Array.from({ length: 20 }, (_, i) => [1, 2, 3, 2][i % 4]));

    // Every message is tried and rescheduled; then each is tried again, its attempts counted.
    await eventually(() => sent.every((m) => retriesOf(h, m.ref) >= 1), { timeoutMs: 10_000 });
    const before = await statusOf(h, 'outage');
    expect([...before.values()].map((v) => v.status)).toEqual(Array.from({ length: 20 }, () => 'queued'));
    for (const m of sent) expect(before.get(m.ref)?.submit_attempts).toBeGreaterThanOrEqual(1);

    await eventually(
      () => sent.every((m) => retriesOf(h, m.ref) > (before.get(m.ref)?.submit_attempts ?? 0)),
      { timeoutMs: 10_000 },
    );
    const later = await statusOf(h, 'outage');
    for (const m of sent) {
      expect(later.get(m.ref)?.status).toBe('queued');
      expect(later.get(m.ref)?.submit_attempts).toBeGreaterThan(before.get(m.ref)?.submit_attempts ?? 0);
    }
    // The reconnect attempts are reported too, each as an error of the delivery adapter.
    const outageErrors = h.errors.filter((e) => e.source === 'delivery').map((e) => String((e.error as Error).message));
    expect(outageErrors.length).toBeGreaterThanOrEqual(2);
    expect(outageErrors.some((text) => /ECONNREFUSED/.test(text))).toBe(true);
    expect(outageErrors.every((text) => /SMPP/.test(text))).toBe(true);

    // 3. A new SMSC on the same port: the adapter rebinds and everything goes out once.
    // Its ids do not repeat the first run's (see the last test for one whose ids do).
    const second = await startSmscWithReceipts({ port, firstId: 0xb0000000 });
    await eventually(() => sent.every((m) => h.states.get(m.ref) === 'delivered'), { timeoutMs: 15_000 });
    await settle(second);
    const after = await statusOf(h, 'outage');
    expect([...after.values()].map((v) => v.status)).toEqual(Array.from({ length: 20 }, () => 'delivered'));

    expectEachPartOnce(second, sent);
    expect(accepted(second)).toHaveLength(sent.reduce((sum, m) => sum + m.smsCount, 0));
    // States only moved forward: queued messages were submitted, then delivered, once each.
    for (const m of sent) expect(h.history.get(m.ref)).toEqual(['submitted', 'delivered']);
    expect([...h.states.values()].filter((state) => state === 'failed')).toEqual([]);
    expect(h.errors.filter((e) => e.source !== 'delivery')).toEqual([]);
    expect(h.httpStatuses.filter((status) => status >= 500)).toEqual([]);
  });

  it('keeps messages queued while the SMSC throttles every submit, and sends them once the throttle is lifted', async () => {
    const smsc = await startSmscWithReceipts();
    const h = await startHarness(smsc.port, { throttleRetryMs: 200 });
    const batch = outageBatch().slice(0, 8);
    for (const { recipient } of batch) await smsc.send({ cmd: 'status', destination: recipient, status: ESME_RTHROTTLED });

    const sent = await send(h, 'throttled', batch);
    await eventually(() => sent.every((m) => retriesOf(h, m.ref) >= 2), { timeoutMs: 10_000 });
    const during = await statusOf(h, 'throttled');
    for (const m of sent) {
      expect(during.get(m.ref)?.status).toBe('queued');
      expect(during.get(m.ref)?.submit_attempts).toBeGreaterThanOrEqual(2);
    }
    // The SMSC refused the submits, and nothing it refused counts as sent.
    await settle(smsc);
    const throttled = smsc.events.filter((e): e is Submit => e.event === 'submit' && e.status === ESME_RTHROTTLED);
    expect(new Set(throttled.map((s) => s.destinationAddr))).toEqual(new Set(batch.map((m) => m.recipient)));
    expect(throttled.every((s) => s.id === null)).toBe(true);
    expect(accepted(smsc)).toEqual([]);
    // The throttle is honoured: no retry is scheduled sooner than throttleRetryMs (less a little for clock reads).
    for (const r of h.retrying) expect(r.nextAttemptAt - r.seenAt).toBeGreaterThanOrEqual(150);
    // A throttled SMSC is still a bound SMSC: the link is not torn down.
    expect(h.delivery.bound).toBe(true);

    for (const { recipient } of batch) await smsc.send({ cmd: 'status', destination: recipient, status: 0 });
    await eventually(() => sent.every((m) => h.states.get(m.ref) === 'delivered'), { timeoutMs: 15_000 });
    await settle(smsc);
    const after = await statusOf(h, 'throttled');
    expect([...after.values()].map((v) => v.status)).toEqual(Array.from({ length: 8 }, () => 'delivered'));

    expectEachPartOnce(smsc, sent);
    for (const m of sent) expect(h.history.get(m.ref)).toEqual(['submitted', 'delivered']);
    expect(h.errors).toEqual([]);
    expect(h.httpStatuses.filter((status) => status >= 500)).toEqual([]);
  });

  // A bug found by this file: an SMSC that restarts its id counter issues an id an old
  // message already holds. When the new part's receipt overtook the recording of its
  // submission, storage matched it to the old, finished message and it was dropped as a
  // duplicate; the new message stayed `submitted` until the receipt timeout.
  it('delivers a message whose carrier id an SMSC restart reused, when its receipt overtakes the recording', async () => {
    const first = await startSmscWithReceipts();
    const port = first.port;
    const h = await startHarness(port, { storage: new ReceiptFirstStorage() });

    const [old] = await send(h, 'before-restart', [{ recipient: '254712345678', message: 'old' }]);
    if (!old) throw new Error('no message accepted');
    // A receipt that overtakes a fresh id is parked and applied: this part works.
    await eventually(() => h.states.get(old.ref) === 'delivered', { timeoutMs: 5_000 });

    await first.stop();
    const second = await startSmscWithReceipts({ port });
    await h.delivery.waitForBind(5_000);
    const [fresh] = await send(h, 'after-restart', [{ recipient: '254712345679', message: 'new' }]);
    if (!fresh) throw new Error('no message accepted');
    await second.waitFor((e) => e.event === 'submit' && e.destinationAddr === '254712345679');
    // Same id as the old message's part: the collision this test is about.
    expect(accepted(second).map((s) => s.id)).toEqual(accepted(first).map((s) => s.id));

    // A parked receipt is retried within a second; three leave room for a slow machine.
    await eventually(() => h.states.get(fresh.ref) === 'delivered', { timeoutMs: 3_000 });
  });
});

/**
 * Memory storage where a receipt always overtakes the recording of its own submission:
 * `recordSubmission` waits (up to 2 s) until a receipt naming that carrier id is applied
 * after the call began, as happens when storage is slower than the SMSC's
 * submit_sm_resp and receipt.
 */
class ReceiptFirstStorage extends MemoryStorage {
  /** Carrier id -> how many receipts naming it were applied. */
  readonly #applied = new Map<string, number>();
  readonly #listeners = new Set<() => void>();

  override async applyReceipt(receipt: PartReceipt): Promise<ReceiptResult> {
    try {
      return await super.applyReceipt(receipt);
    } finally {
      for (const id of receipt.carrierIds) this.#applied.set(id, (this.#applied.get(id) ?? 0) + 1);
      for (const listener of [...this.#listeners]) listener();
    }
  }

  override async recordSubmission(ref: string, index: number, carrierId: string, now: number): Promise<SubmissionResult> {
    const before = this.#applied.get(carrierId) ?? 0;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#listeners.delete(check);
        resolve();
      };
      const check = () => {
        if ((this.#applied.get(carrierId) ?? 0) > before) done();
      };
      const timer = setTimeout(done, 2_000);
      this.#listeners.add(check);
      check();
    });
    return super.recordSubmission(ref, index, carrierId, now);
  }
}

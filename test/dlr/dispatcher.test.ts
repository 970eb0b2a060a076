import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { CallbackDispatcher } from '../../src/dlr/dispatcher.js';
import { resolveDlrOptions, type DlrConfig, type DlrOptions, type HostResolver } from '../../src/dlr/options.js';
import type { Emit, SmsEventName, SmsEvents } from '../../src/observe/events.js';
import { outcome } from '../../src/lifecycle/states.js';
import { MemoryStorage } from '../../src/storage/memory/adapter.js';
import { cleanupAfterEach, newMessage, storeTerminal } from './helpers.js';
import { eventually } from '../helpers/poll.js';

type Recorded = { name: SmsEventName; payload: Parameters<Emit>[1] };

const PRINCIPAL = 'principal-1';
const { cleanups, receiver } = cleanupAfterEach();

interface Harness {
  storage: MemoryStorage;
  dispatcher: CallbackDispatcher;
  events: Recorded[];
  clock: { now: number };
  config: DlrConfig;
  named<K extends SmsEventName>(name: K): Parameters<SmsEvents[K]>[0][];
}

/** A dispatcher on MemoryStorage with a clock the test moves (or the real one). */
function harness(options: DlrOptions, extra: { realClock?: boolean; resolve?: HostResolver } = {}): Harness {
  const storage = new MemoryStorage();
  const events: Recorded[] = [];
  const emit: Emit = (name, payload) => {
    events.push({ name, payload });
  };
  const clock = { now: Date.now() };
  const config: DlrConfig = {
    ...resolveDlrOptions({ allowPrivateAddresses: ['127.0.0.0/8'], pollIntervalMs: 10, ...options }),
    ...(extra.resolve ? { resolve: extra.resolve } : {}),
  };
  const dispatcher = new CallbackDispatcher({
    storage,
    emit,
    config,
    owner: 'test-instance',
    now: extra.realClock ? Date.now : () => clock.now,
    random: () => 0.5,
  });
  cleanups.push(() => dispatcher.close());
  return {
    storage,
    dispatcher,
    events,
    clock,
    config,
    named: <K extends SmsEventName>(name: K) =>
      events.filter((e) => e.name === name).map((e) => e.payload as Parameters<SmsEvents[K]>[0]),
  };
}

/** A second, started dispatcher on `first`'s storage and options: the instance after a restart. */
function restart(first: Harness, now: () => number): { dispatcher: CallbackDispatcher; events: Recorded[] } {
  const events: Recorded[] = [];
  const dispatcher = new CallbackDispatcher({
    storage: first.storage,
    emit: (name, payload) => void events.push({ name, payload }),
    config: first.config,
    owner: 'restarted-instance',
    now,
  });
  cleanups.push(() => dispatcher.close());
  dispatcher.start();
  return { dispatcher, events };
}

describe('CallbackDispatcher', () => {
  it('retries on 500 with the same uid until a 200, on the schedule', async () => {
    const r = await receiver((n) => ({ status: n < 2 ? 500 : 200 }));
    const h = harness({ schedule: [0, 50, 100] });
    const message = newMessage(`${r.origin}/dlr`, h.clock.now);
    await storeTerminal(h.storage, [message], h.clock.now);
    h.dispatcher.start();

    for (const [attempt, delay] of [[1, 50], [2, 100]] as const) {
      await eventually(() => h.named('dlr.retrying').length === attempt, { what: `retry ${attempt}` });
      const retrying = h.named('dlr.retrying')[attempt - 1]!;
      expect(retrying).toMatchObject({ attempt, statusCode: 500, error: 'HTTP 500' });
      expect(retrying.nextAttemptAt - h.clock.now).toBe(delay);
      const stored = await h.storage.getMessage(PRINCIPAL, message.ref);
      expect(stored!.callback).toMatchObject({ state: 'pending', attempts: attempt, lastStatusCode: 500 });
      expect(stored!.callback!.nextAttemptAt).toBe(retrying.nextAttemptAt);
      // Not due yet: nothing is sent before the clock reaches it.
      h.dispatcher.wake();
      expect(r.requests).toHaveLength(attempt);
      h.clock.now = retrying.nextAttemptAt;
      h.dispatcher.wake();
    }
    await eventually(() => h.named('dlr.sent').length === 1, { what: 'dlr.sent' });
    expect(h.named('dlr.sent')[0]).toMatchObject({ attempt: 3, statusCode: 200, url: `${r.origin}/dlr` });
    expect(r.requests).toHaveLength(3);
    const uids = r.requests.map((req) => JSON.parse(req.body).uid as string);
    expect(new Set(uids).size).toBe(1);
    expect(JSON.parse(r.requests[0]!.body)).toMatchObject({
      uid: h.named('dlr.sent')[0]!.uid,
      event_type: 'sms_delivery_status',
      data: { external_id: 'abc-1', message_ref: message.ref, status: 'delivered' },
    });
    expect((await h.storage.getMessage(PRINCIPAL, message.ref))!.callback).toMatchObject({ state: 'delivered', attempts: 3 });
  });

  it('makes one claim of the wakes of one turn, not one per report that became due', async () => {
    const r = await receiver();
    // Long polls: every claim below comes from a wake or a finished attempt, not the timer.
    const h = harness({ pollIntervalMs: 60_000 }, { realClock: true });
    let claims = 0;
    const claim = h.storage.claimCallbacks.bind(h.storage);
    h.storage.claimCallbacks = (options) => {
      claims++;
      return claim(options);
    };
    h.dispatcher.start();
    await eventually(() => claims === 1, { what: 'the first poll' });
    const messages = Array.from({ length: 40 }, () => newMessage(`${r.origin}/dlr`, Date.now()));
    await h.storage.insertMessages(messages);
    claims = 0;
    // As a router does: each message that ends wakes the dispatcher, here 40 in one turn
    // of the event loop (the storage answers in microtasks).
    for (const message of messages) {
      await h.storage.finish(message.ref, outcome('delivered', 'delivered_to_terminal'), Date.now());
      h.dispatcher.wake();
    }
    await eventually(() => h.named('dlr.sent').length === 40, { timeoutMs: 10_000, what: 'every report sent' });
    expect(r.requests).toHaveLength(40);
    expect(claims).toBeLessThanOrEqual(2);
  });

  it("each dlr.* event's message shows the report as the attempt it announces left it, as storage then has it", async () => {
    const r = await receiver((n) => ({ status: n === 0 ? 500 : 204 }));
    const h = harness({ schedule: [0, 50] });
    const message = newMessage(`${r.origin}/dlr`, h.clock.now);
    await storeTerminal(h.storage, [message], h.clock.now);
    h.dispatcher.start();
    await eventually(() => h.named('dlr.retrying').length === 1, { what: 'the first attempt' });
    const retrying = h.named('dlr.retrying')[0]!;
    const afterFirst = (await h.storage.getMessage(PRINCIPAL, message.ref))!.callback;
    expect(afterFirst).toEqual({ state: 'pending', attempts: 1, lastStatusCode: 500, lastError: 'HTTP 500', nextAttemptAt: retrying.nextAttemptAt });
    expect(retrying.message.callback).toEqual(afterFirst);

    h.clock.now = retrying.nextAttemptAt;
    h.dispatcher.wake();
    await eventually(() => h.named('dlr.sent').length === 1, { what: 'dlr.sent' });
    const sent = h.named('dlr.sent')[0]!;
    expect(sent).toMatchObject({ attempt: 2, statusCode: 204 });
    const afterSecond = (await h.storage.getMessage(PRINCIPAL, message.ref))!.callback;
    expect(afterSecond).toMatchObject({ state: 'delivered', attempts: 2, lastStatusCode: 204, lastError: null, nextAttemptAt: null });
    expect(sent.message.callback).toEqual(afterSecond);
  });

  it('gives up when the schedule runs out', async () => {
    const r = await receiver(() => ({ status: 503 }));
    const h = harness({ schedule: [0, 20] });
    const message = newMessage(r.origin, h.clock.now);
    await storeTerminal(h.storage, [message], h.clock.now);
    h.dispatcher.start();
    await eventually(() => h.named('dlr.retrying').length === 1);
    h.clock.now += 20;
    h.dispatcher.wake();
    await eventually(() => h.named('dlr.failed').length === 1);
    expect(h.named('dlr.failed')[0]).toMatchObject({ attempt: 2, statusCode: 503 });
    expect((await h.storage.getMessage(PRINCIPAL, message.ref))!.callback).toMatchObject({ state: 'failed', attempts: 2 });
  });

  it('stops at once on 410 Gone', async () => {
    const r = await receiver(() => ({ status: 410 }));
    const h = harness({ schedule: [0, 50, 100] });
    const message = newMessage(r.origin, h.clock.now);
    await storeTerminal(h.storage, [message], h.clock.now);
    h.dispatcher.start();
    await eventually(() => h.named('dlr.failed').length === 1);
    expect(h.named('dlr.failed')[0]).toMatchObject({ attempt: 1, statusCode: 410 });
    expect(h.named('dlr.retrying')).toHaveLength(0);
    expect((await h.storage.getMessage(PRINCIPAL, message.ref))!.callback).toMatchObject({ state: 'failed', attempts: 1 });
    expect(r.requests).toHaveLength(1);
  });

  it('does not follow a 302 and counts it as a failed attempt', async () => {
    const target = await receiver();
    const r = await receiver(() => ({ status: 302, headers: { location: `${target.origin}/dlr` } }));
    const h = harness({ schedule: [0, 50] });
    await storeTerminal(h.storage, [newMessage(r.origin, h.clock.now)], h.clock.now);
    h.dispatcher.start();
    await eventually(() => h.named('dlr.retrying').length === 1);
    expect(h.named('dlr.retrying')[0]).toMatchObject({ statusCode: 302, error: expect.stringMatching(/redirect not followed/) });
    expect(target.requests).toHaveLength(0);
  });

  it('honours Retry-After: the recorded next attempt waits as long as asked', async () => {
    const r = await receiver((n) => (n === 0 ? { status: 429, headers: { 'retry-after': '3' } } : { status: 200 }));
    const h = harness({ schedule: [0, 50, 100] });
    const message = newMessage(r.origin, h.clock.now);
    await storeTerminal(h.storage, [message], h.clock.now);
    h.dispatcher.start();
    await eventually(() => h.named('dlr.retrying').length === 1);
    const retrying = h.named('dlr.retrying')[0]!;
    expect(retrying.nextAttemptAt - h.clock.now).toBe(3_000);
    expect((await h.storage.getMessage(PRINCIPAL, message.ref))!.callback!.nextAttemptAt).toBe(retrying.nextAttemptAt);
    h.clock.now += 2_000;
    h.dispatcher.wake();
    h.clock.now += 1_000;
    h.dispatcher.wake();
    await eventually(() => h.named('dlr.sent').length === 1);
    expect(r.requests).toHaveLength(2);
  });

  it('signs with Standard Webhooks; a per-message secret wins over the global one', async () => {
    const globalSecret = `whsec_${Buffer.from('global secret, twenty-four bytes+').toString('base64')}`;
    const ownSecret = `whsec_${Buffer.from('per-principal secret, 24 bytes++').toString('base64')}`;
    const r = await receiver();
    const h = harness({ secret: globalSecret }, { realClock: true });
    const plain = newMessage(`${r.origin}/a`, Date.now());
    const own = newMessage(`${r.origin}/b`, Date.now(), { callbackSecret: ownSecret, referenceField: 'message_id' });
    await storeTerminal(h.storage, [plain, own], Date.now());
    h.dispatcher.start();
    await eventually(() => h.named('dlr.sent').length === 2);
    for (const request of r.requests) {
      const secret = request.url === '/a' ? globalSecret : ownSecret;
      const body = new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as { uid: string; data: Record<string, unknown> };
      expect(request.headers['webhook-id']).toBe(body.uid);
      if (request.url === '/b') expect(body.data.message_id).toBe('abc-1');
      const other = request.url === '/a' ? ownSecret : globalSecret;
      expect(() => new Webhook(other).verify(request.body, request.headers as Record<string, string>)).toThrow();
    }
  });

  it('sends unsigned when no secret applies', async () => {
    const r = await receiver();
    const h = harness({});
    await storeTerminal(h.storage, [newMessage(r.origin, h.clock.now)], h.clock.now);
    h.dispatcher.start();
    await eventually(() => h.named('dlr.sent').length === 1);
    expect(r.requests[0]!.headers['webhook-signature']).toBeUndefined();
  });

  it('fails an internal literal address at once without dialling it', async () => {
    const r = await receiver();
    const h = harness({ allowPrivateAddresses: false, schedule: [0, 50] });
    await storeTerminal(h.storage, [newMessage(`http://127.1:${r.port}/dlr`, h.clock.now)], h.clock.now);
    h.dispatcher.start();
    await eventually(() => h.named('dlr.failed').length === 1);
    expect(h.named('dlr.failed')[0]).toMatchObject({ attempt: 1, statusCode: null, error: expect.stringMatching(/^blocked/) });
    expect(r.requests).toHaveLength(0);
  });

  it('retries a name that resolves to an internal address, never dialling it', async () => {
    const r = await receiver();
    const toLoopback: HostResolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const h = harness({ allowPrivateAddresses: false, schedule: [0, 50] }, { resolve: toLoopback });
    await storeTerminal(h.storage, [newMessage(`http://client.example:${r.port}/dlr`, h.clock.now)], h.clock.now);
    h.dispatcher.start();
    await eventually(() => h.named('dlr.retrying').length === 1);
    expect(h.named('dlr.retrying')[0]!.error).toMatch(/^blocked: client\.example resolves to address 127\.0\.0\.1/);
    expect(r.requests).toHaveLength(0);
  });

  it('resumes a report whose sender died, once its lease ends', async () => {
    const r = await receiver();
    const h = harness({ leaseMs: 40_000, timeoutMs: 15_000 });
    const message = newMessage(r.origin, h.clock.now);
    await storeTerminal(h.storage, [message], h.clock.now);
    // Another instance claims it and dies before recording anything.
    const [lost] = await h.storage.claimCallbacks({ owner: 'dead-instance', limit: 10, leaseMs: 40_000, now: h.clock.now });
    expect(lost).toBeDefined();
    h.dispatcher.start();
    h.dispatcher.wake();
    expect(r.requests).toHaveLength(0);
    h.clock.now += 40_001;
    h.dispatcher.wake();
    await eventually(() => h.named('dlr.sent').length === 1);
    expect(h.named('dlr.sent')[0]!.uid).toBe(lost!.uid);
    expect(JSON.parse(r.requests[0]!.body).uid).toBe(lost!.uid);
  });

  it('picks up, after a restart, a report a closed dispatcher left pending', async () => {
    const r = await receiver((n) => ({ status: n === 0 ? 500 : 204 }));
    const first = harness({ schedule: [0, 50] });
    const message = newMessage(r.origin, first.clock.now);
    await storeTerminal(first.storage, [message], first.clock.now);
    first.dispatcher.start();
    await eventually(() => first.named('dlr.retrying').length === 1);
    await first.dispatcher.close();

    const { events } = restart(first, () => first.clock.now + 50);
    await eventually(() => events.some((e) => e.name === 'dlr.sent'));
    expect(events.find((e) => e.name === 'dlr.sent')!.payload).toMatchObject({ attempt: 2, statusCode: 204 });
    expect(new Set(r.requests.map((req) => JSON.parse(req.body).uid)).size).toBe(1);
  });

  it('close() hands back the reports it held but had not started, so a restart sends them at once', async () => {
    const r = await receiver((n) => ({ status: 200, delayMs: n === 0 ? 300 : 0 }));
    const first = harness({ perHostConcurrency: 1 });
    const messages = Array.from({ length: 20 }, () => newMessage(`${r.origin}/dlr`, first.clock.now));
    await storeTerminal(first.storage, messages, first.clock.now);
    first.dispatcher.start();
    // One attempt runs; the other 19 wait in the host's queue, claimed for a whole lease.
    await eventually(() => r.requests.length === 1, { what: 'the first attempt' });
    await first.dispatcher.close();
    expect(first.named('dlr.sent')).toHaveLength(1);

    // The same clock: none of the first instance's leases has ended.
    const { events } = restart(first, () => first.clock.now);
    await eventually(() => events.filter((e) => e.name === 'dlr.sent').length === 19, { timeoutMs: 10_000, what: 'the 19 reports left waiting' });
    expect(new Set(r.requests.map((req) => JSON.parse(req.body).uid)).size).toBe(20);
  });

  it('close() leaves alone a held report whose lease is nearly over: it may be another instance’s by now', async () => {
    const r = await receiver((n) => ({ status: 200, delayMs: n === 0 ? 300 : 0 }));
    const h = harness({ perHostConcurrency: 1, leaseMs: 35_000, timeoutMs: 15_000 });
    const messages = Array.from({ length: 3 }, () => newMessage(`${r.origin}/dlr`, h.clock.now));
    await storeTerminal(h.storage, messages, h.clock.now);
    h.dispatcher.start();
    await eventually(() => r.requests.length === 1, { what: 'the first attempt' });
    // 25 s after the claim, an attempt (up to 15 s) would outlast the 35 s lease.
    h.clock.now += 25_000;
    await h.dispatcher.close();
    const due = await h.storage.claimCallbacks({ owner: 'next-instance', limit: 10, leaseMs: 35_000, now: h.clock.now });
    expect(due).toEqual([]);
  });

  it('a slow receiver does not delay reports to a fast one', async () => {
    const slow = await receiver(() => ({ status: 200, delayMs: 2_000 }));
    const fast = await receiver();
    // Two host names for the same loopback address: lanes are per host name.
    const resolve: HostResolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const h = harness({ timeoutMs: 5_000, concurrency: 64, perHostConcurrency: 8 }, { realClock: true, resolve });
    const now = Date.now();
    const slowOnes = Array.from({ length: 1_000 }, () => newMessage(`http://slow.example:${slow.port}/dlr`, now));
    const fastOnes = Array.from({ length: 10 }, () => newMessage(`http://fast.example:${fast.port}/dlr`, now));
    // The slow host's reports are due first: the oldest-first claim meets them first.
    await storeTerminal(h.storage, slowOnes, now);
    await storeTerminal(h.storage, fastOnes, now + 1);
    const fastRefs = new Set(fastOnes.map((m) => m.ref));
    const started = Date.now();
    h.dispatcher.start();
    await eventually(() => h.named('dlr.sent').filter((e) => fastRefs.has(e.message.ref)).length === 10, { timeoutMs: 10_000, what: 'fast reports' });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(1_500);
    expect(slow.maxConcurrent).toBeLessThanOrEqual(8);
    expect(slow.requests.length).toBeLessThanOrEqual(8);
    expect(h.events.filter((e) => e.name === 'error')).toHaveLength(0);
  });

  it('one fast receiver gets thousands of reports without waiting for leases to end', async () => {
    const fast = await receiver();
    const h = harness({ concurrency: 64, perHostConcurrency: 8 }, { realClock: true });
    const now = Date.now();
    const messages = Array.from({ length: 2_000 }, () => newMessage(`${fast.origin}/dlr`, now));
    await storeTerminal(h.storage, messages, now);
    const started = Date.now();
    h.dispatcher.start();
    await eventually(() => h.named('dlr.sent').length === 2_000, { timeoutMs: 10_000, what: 'all 2,000 reports' });
    // A report left to its lease would take leaseMs (35 s by default) to go out.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(fast.requests.length).toBe(2_000);
  });

  it('close() waits for attempts in flight and leaves no socket behind', async () => {
    const r = await receiver(() => ({ status: 200, delayMs: 300 }));
    const h = harness({}, { realClock: true });
    await storeTerminal(h.storage, [newMessage(r.origin, Date.now())], Date.now());
    h.dispatcher.start();
    await eventually(() => r.requests.length === 1);
    await h.dispatcher.close();
    expect(h.named('dlr.sent')).toHaveLength(1);
    // The receiver sees the sender's keep-alive connection end (it would idle for 5 s).
    expect(r.openConnections).toBe(1);
    await eventually(() => r.openConnections === 0, { timeoutMs: 1_000, what: 'the connection to close' });
  });

  it('reports a storage failure as an error event and keeps polling', async () => {
    const r = await receiver();
    const h = harness({});
    await storeTerminal(h.storage, [newMessage(r.origin, h.clock.now)], h.clock.now);
    const realClaim = h.storage.claimCallbacks.bind(h.storage);
    let failures = 1;
    h.storage.claimCallbacks = async (options) => {
      if (failures-- > 0) throw new Error('database is down');
      return realClaim(options);
    };
    h.dispatcher.start();
    await eventually(() => h.named('dlr.sent').length === 1);
    expect(h.named('error')[0]).toMatchObject({ source: 'dlr', error: expect.objectContaining({ message: 'database is down' }) });
  });
});

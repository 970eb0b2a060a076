/**
 * Report recovery through the real dispatcher and a real HTTP receiver: a receiver outage
 * leaves reports failed, a replay sends each again as a new attempt, signed at that
 * attempt's time, with its retry schedule started anew; and a principal's failover URL,
 * which takes a report once the main URL's retries are spent.
 */
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { CallbackDispatcher } from '../../src/dlr/dispatcher.js';
import { resolveDlrOptions, type DlrOptions } from '../../src/dlr/options.js';
import { replayed } from '../../src/dlr/controls.js';
import type { Emit, SmsEventName, SmsEvents } from '../../src/observe/events.js';
import { MemoryStorage } from '../../src/storage/memory/adapter.js';
import { cleanupAfterEach, newMessage, storeTerminal } from './helpers.js';

const PRINCIPAL = 'principal-1';
const SECRET = `whsec_${Buffer.from('replay secret, twenty-four bytes').toString('base64')}`;
const { cleanups, receiver } = cleanupAfterEach();

/** A started dispatcher on MemoryStorage whose clock runs `clock.offset` ms ahead of the real one; `reached(name, n)` resolves at the n-th event `name`. */
function harness(options: DlrOptions, failoverOf?: (principalId: string) => string | null) {
  const storage = new MemoryStorage();
  const counts = new Map<SmsEventName, number>();
  const waiters: { name: SmsEventName; count: number; resolve: () => void }[] = [];
  const emit: Emit = (name, payload) => {
    for (const listener of listeners.get(name) ?? []) listener(payload as never);
    const count = (counts.get(name) ?? 0) + 1;
    counts.set(name, count);
    for (const waiter of waiters) if (waiter.name === name && waiter.count === count) waiter.resolve();
  };
  const clock = { offset: 0 };
  const now = () => Date.now() + clock.offset;
  const config = resolveDlrOptions({ allowPrivateAddresses: ['127.0.0.0/8'], pollIntervalMs: 10, secret: SECRET, ...options });
  const dispatcher = new CallbackDispatcher({ storage, emit, config, owner: 'replay-test', now, random: () => 0.5, ...(failoverOf === undefined ? {} : { failoverOf }) });
  cleanups.push(() => dispatcher.close());
  const listeners = new Map<SmsEventName, ((payload: never) => void)[]>();
  const on = <K extends SmsEventName>(name: K, listener: (payload: Parameters<SmsEvents[K]>[0]) => void) => {
    listeners.set(name, [...(listeners.get(name) ?? []), listener as (payload: never) => void]);
  };
  const reached = (name: SmsEventName, count: number) =>
    (counts.get(name) ?? 0) >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ name, count, resolve }));
  return { storage, dispatcher, clock, now, reached, on, count: (name: SmsEventName) => counts.get(name) ?? 0 };
}

describe('report replay', () => {
  it('after a receiver outage leaves 10,000 reports failed, a replay delivers every one exactly once more, each signed anew', { timeout: 180_000 }, async () => {
    const REPORTS = 10_000;
    let fixed = false;
    const r = await receiver(() => ({ status: fixed ? 200 : 500 }));
    const h = harness({ schedule: [0, 5], concurrency: 64, perHostConcurrency: 32 });
    // The outage was an hour ago; the replay is now (a receiver checks the timestamp is recent).
    h.clock.offset = -3_600_000;
    const start = h.now();
    const messages = Array.from({ length: REPORTS }, (_, i) => newMessage(`${r.origin}/dlr`, start + i));
    await storeTerminal(h.storage, messages, start + REPORTS);
    h.dispatcher.start();
    await h.reached('dlr.failed', REPORTS);
    expect(r.requests).toHaveLength(2 * REPORTS);
    const failedPage = await h.storage.listCallbacks({ principalId: PRINCIPAL, states: ['failed'], limit: 1000 });
    expect(failedPage.messages).toHaveLength(1000);
    expect(failedPage.messages[0]!.callback).toMatchObject({ state: 'failed', attempts: 2, lastStatusCode: 500, lastError: 'HTTP 500' });

    // The receiver is back an hour later; the replay is signed at its own time.
    fixed = true;
    h.clock.offset = 0;
    const replayedAt = h.now();
    const failedRequests = r.requests.length;
    expect(await h.storage.replayCallbacks({ principalId: PRINCIPAL, since: start }, replayedAt)).toBe(REPORTS);
    h.dispatcher.wake();
    await h.reached('dlr.sent', REPORTS);

    const replayed = r.requests.slice(failedRequests);
    expect(replayed).toHaveLength(REPORTS);
    const refs = new Map<string, number>();
    const verifier = new Webhook(SECRET);
    for (const request of replayed) {
      const body = verifier.verify(request.body, request.headers as Record<string, string>) as { uid: string; data: { message_ref: string } };
      expect(request.headers['webhook-id']).toBe(body.uid);
      refs.set(body.data.message_ref, (refs.get(body.data.message_ref) ?? 0) + 1);
      expect(Number(request.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(Math.floor(replayedAt / 1000));
    }
    expect(refs.size).toBe(REPORTS);
    expect([...refs.values()].every((count) => count === 1)).toBe(true);
    expect((await h.storage.listCallbacks({ principalId: PRINCIPAL, limit: 10 })).messages).toEqual([]);
    const stored = await h.storage.getMessage(PRINCIPAL, messages[0]!.ref);
    expect(stored!.callback).toMatchObject({ state: 'delivered', attempts: 3, lastStatusCode: 200, restartedAfter: 2 });
  });

  it('a replayed report is retried on the schedule again, not given up at once', async () => {
    let answers = 0;
    // Two failures use up the schedule; after the replay, one more failure, then success.
    const r = await receiver(() => ({ status: ++answers <= 3 ? 500 : 200 }));
    const h = harness({ schedule: [0, 5] });
    const message = newMessage(`${r.origin}/dlr`, h.now());
    await storeTerminal(h.storage, [message], h.now());
    h.dispatcher.start();
    await h.reached('dlr.failed', 1);
    expect(await h.storage.replayCallbacks({ principalId: PRINCIPAL, refs: [message.ref] }, h.now())).toBe(1);
    h.dispatcher.wake();
    await h.reached('dlr.sent', 1);
    expect(h.count('dlr.retrying')).toBe(2);
    expect(h.count('dlr.failed')).toBe(1);
    expect((await h.storage.getMessage(PRINCIPAL, message.ref))!.callback).toMatchObject({ state: 'delivered', attempts: 4 });
  });

  it('a principal\u2019s failover URL takes a report once the main URL\u2019s retries are spent, on the whole schedule, signed alike', async () => {
    const main = await receiver(() => ({ status: 500 }));
    let failoverAnswers = 0;
    const failover = await receiver(() => ({ status: ++failoverAnswers === 1 ? 503 : 200 }));
    const h = harness({ schedule: [0, 5] }, (principalId) => (principalId === PRINCIPAL ? `${failover.origin}/backup` : null));
    const message = newMessage(`${main.origin}/dlr`, h.now());
    const elsewhere = newMessage(`${main.origin}/dlr`, h.now(), { principalId: 'no-failover' });
    await storeTerminal(h.storage, [message, elsewhere], h.now());
    h.dispatcher.start();
    await h.reached('dlr.sent', 1);
    await h.reached('dlr.failed', 1);
    // Two attempts at the main URL each, then the schedule again at the failover URL: a 503, a 200.
    expect(main.requests).toHaveLength(4);
    expect(failover.requests).toHaveLength(2);
    const verified = new Webhook(SECRET).verify(failover.requests[1]!.body, failover.requests[1]!.headers as Record<string, string>) as { data: { message_ref: string } };
    expect(verified.data.message_ref).toBe(message.ref);
    expect((await h.storage.getMessage(PRINCIPAL, message.ref))!.callback).toMatchObject({ state: 'delivered', attempts: 4, failover: true, restartedAfter: 2 });
    expect((await h.storage.getMessage('no-failover', elsewhere.ref))!.callback).toMatchObject({ state: 'failed', attempts: 2 });
  });

  it('a URL failing for pauseAfterMs is paused: no more requests, its reports fail at once; a replay resumes it and sends them', async () => {
    let fixed = false;
    const r = await receiver(() => ({ status: fixed ? 200 : 500 }));
    const h = harness({ schedule: [0, 5, 5], pauseAfterMs: 60_000 });
    const paused: { url: string; failingSince: number }[] = [];
    const resumed: string[] = [];
    h.on('callback.endpoint_paused', (event) => paused.push(event));
    h.on('callback.endpoint_resumed', (event) => resumed.push(`${event.by} ${event.url}`));
    const url = `${r.origin}/dlr`;
    const first = newMessage(url, h.now());
    await storeTerminal(h.storage, [first], h.now());
    h.dispatcher.start();
    await h.reached('dlr.failed', 1);
    expect(r.requests).toHaveLength(3);
    expect(paused).toEqual([]);
    // Two minutes on, it still fails: paused at its first failure past a minute.
    h.clock.offset = 120_000;
    const second = newMessage(url, h.now());
    await storeTerminal(h.storage, [second], h.now());
    h.dispatcher.wake();
    await h.reached('dlr.failed', 2);
    expect(paused).toEqual([{ url, failingSince: expect.any(Number), at: expect.any(Number) }]);
    expect(r.requests).toHaveLength(4);
    const third = newMessage(url, h.now());
    await storeTerminal(h.storage, [third], h.now());
    h.dispatcher.wake();
    await h.reached('dlr.failed', 3);
    expect(r.requests, 'no request to a paused URL').toHaveLength(4);
    expect((await h.storage.getMessage(PRINCIPAL, third.ref))!.callback).toMatchObject({ state: 'failed', lastStatusCode: null, lastError: expect.stringMatching(/^paused: /) });
    expect(h.dispatcher.endpoints.paused()).toEqual([{ url, failingSince: paused[0]!.failingSince }]);

    fixed = true;
    expect(await h.storage.replayCallbacks({ principalId: PRINCIPAL, since: 0 }, h.now())).toBe(3);
    replayed(h.dispatcher, PRINCIPAL, h.now());
    await h.reached('dlr.sent', 3);
    expect(resumed).toEqual([`replay ${url}`]);
    expect(h.dispatcher.endpoints.paused()).toEqual([]);
    expect(h.dispatcher.endpoints.resume(url, 'api', h.now()), 'not paused any more').toBe(false);
  });
});

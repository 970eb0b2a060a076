/**
 * The dashboard's last-hour counts (demo/dashboard/stats.ts), with a clock the test holds:
 * each message counted once in its latest state, the window, and the delivery rate.
 */
import { describe, expect, it } from 'vitest';
import type { MessageRecord, NewMessage, SmsRouter } from '../../src/index.js';
import { HourStats, HOUR_MS } from '../../demo/dashboard/stats.js';

// The counts' window, with a clock the test holds: no browser needed.
describe('the dashboard\u2019s last hour', () => {
  /** The router's `on`, which is all HourStats uses, and a way to emit. */
  function fakeRouter(): { sms: SmsRouter; emit: (name: string, payload: unknown) => void } {
    const listeners = new Map<string, ((payload: unknown) => void)[]>();
    const sms = {
      on(name: string, listener: (payload: unknown) => void) {
        listeners.set(name, [...(listeners.get(name) ?? []), listener]);
        return sms;
      },
    } as unknown as SmsRouter;
    return { sms, emit: (name, payload) => listeners.get(name)?.forEach((listener) => listener(payload)) };
  }
  const message = (ref: string, createdAt: number, state?: string) =>
    (state === undefined ? { ref, createdAt } : { ref, createdAt, state }) as unknown as NewMessage & MessageRecord;

  it('counts each message once in its latest state, and lets it go an hour after it was accepted', () => {
    let now = 1_000_000_000;
    const { sms, emit } = fakeRouter();
    const stats = new HourStats(sms, () => now);
    expect(stats.counts()).toMatchObject({ accepted: 0, finished: 0, deliveryRate: null });

    emit('message.accepted', { message: message('a', now) });
    emit('message.accepted', { message: message('b', now) });
    emit('message.status', { message: message('a', now, 'submitted') });
    emit('message.status', { message: message('a', now, 'delivered') });
    // A late event of an earlier transition does not take it back.
    emit('message.status', { message: message('a', now, 'submitted') });
    now += 1_000;
    emit('message.accepted', { message: message('c', now) });
    emit('message.status', { message: message('b', now - 1_000, 'expired') });
    expect(stats.counts()).toMatchObject({
      accepted: 3,
      states: { queued: 1, submitted: 0, delivered: 1, expired: 1, undelivered: 0, rejected: 0, failed: 0 },
      finished: 2,
      delivered: 1,
      deliveryRate: 0.5,
    });

    // An hour after c was accepted: a and b, a second older, have left the window; c is at its edge.
    now += HOUR_MS;
    expect(stats.counts()).toMatchObject({ accepted: 1, states: { queued: 1 }, finished: 0, deliveryRate: null, since: now - HOUR_MS, at: now });
    // A message accepted before the window is not counted when its late event comes.
    emit('message.status', { message: message('old', now - HOUR_MS - 1, 'delivered') });
    expect(stats.counts().accepted).toBe(1);
  });

  it('leaves cancelled messages out of the delivery rate: they are no delivery\u2019s outcome', () => {
    const now = 1_000_000_000;
    const { sms, emit } = fakeRouter();
    const stats = new HourStats(sms, () => now);
    for (const [ref, state] of [['a', 'delivered'], ['b', 'delivered'], ['c', 'undelivered'], ['d', 'cancelled'], ['e', 'cancelled']] as const) {
      emit('message.accepted', { message: message(ref, now) });
      emit('message.status', { message: message(ref, now, state) });
    }
    expect(stats.counts()).toMatchObject({ accepted: 5, states: { delivered: 2, undelivered: 1, cancelled: 2 }, finished: 3, delivered: 2 });
    expect(stats.counts().deliveryRate).toBeCloseTo(2 / 3);
  });
});

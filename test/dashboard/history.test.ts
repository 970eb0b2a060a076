/**
 * The console's history on a fake clock, fed the router's events by hand: the hour's counts
 * and latency percentiles per minute, the day's per quarter hour, steps dropped once they
 * leave their window, and the latency histogram's accuracy.
 */
import { describe, expect, it } from 'vitest';
import { DAY_STEP_MS, DAY_STEPS, MINUTES, MinuteHistory, type HistorySource } from '../../src/dashboard/history.js';
import { LatencySketch } from '../../src/dashboard/latency-sketch.js';
import { SmsEventEmitter } from '../../src/observe/events.js';
import type { MessageRecord } from '../../src/storage/contract.js';

const MINUTE = 60_000;
/** A Monday, 10:00:00 UTC: a whole quarter hour, so steps start where the test expects. */
const START = Date.UTC(2026, 10, 30, 10, 0, 0);

/** A message as the events carry it: accepted at `createdAt`, its parts submitted at `submittedAt`. */
function record(ref: string, createdAt: number, submittedAt: (number | null)[], extra: Partial<MessageRecord> = {}): MessageRecord {
  return {
    ref, principalId: 'acme', endpoint: 'quick', state: 'submitted', recipient: '254712345678', country: 'KE', createdAt, updatedAt: createdAt,
    parts: submittedAt.map((at, index) => ({ index, carrierId: at === null ? null : `c-${ref}-${index}`, outcome: null, submittedAt: at, endedAt: null })),
    ...extra,
  } as MessageRecord;
}

/** A history on a clock the test moves. */
function fixture() {
  const events = new SmsEventEmitter();
  const clock = { now: START };
  const source: HistorySource = { on: (name, listener) => events.on(name, listener as never) };
  const history = new MinuteHistory(source, () => clock.now);
  /** Accepted at `acceptedAt`, submitted `toSubmit` ms later, final (`state`) `toFinal` ms after that; the clock ends at the final. */
  const life = (ref: string, acceptedAt: number, toSubmit: number, toFinal: number, state: 'delivered' | 'failed' = 'delivered'): void => {
    clock.now = acceptedAt;
    const accepted = record(ref, acceptedAt, [null]);
    events.emit('message.accepted', { message: { ...accepted, weight: 1 } });
    clock.now = acceptedAt + toSubmit;
    const submitted = record(ref, acceptedAt, [clock.now]);
    events.emit('message.submitted', { message: submitted });
    clock.now += toFinal;
    events.emit('message.status', { message: { ...submitted, state }, previousState: 'submitted' });
  };
  return { events, clock, history, life };
}

describe('the console\'s history', () => {
  it('gives each minute the p50 and p95 of its accept-to-submit and submit-to-final latencies', () => {
    const { clock, history, life } = fixture();
    // Twenty messages in one minute: accept-to-submit 100, 200, ... 2,000 ms; each final 5 s after.
    for (let i = 1; i <= 20; i += 1) life(`m${i}`, START + 1_000, i * 100, 5_000);
    clock.now = START + 30_000;
    const h = history.snapshot();
    expect(h.minutes).toHaveLength(MINUTES);
    expect(h.minutes.at(-1)).toBe(START / 1000);
    // Nearest rank: p50 is the 10th (1,000 ms), p95 the 19th (1,900 ms); the histogram is within half a bin.
    expect(h.acceptToSubmit.p50.at(-1)).toBeCloseTo(1.0, 1);
    expect(Math.abs(h.acceptToSubmit.p50.at(-1)! - 1.0)).toBeLessThanOrEqual(0.045);
    expect(Math.abs(h.acceptToSubmit.p95.at(-1)! - 1.9)).toBeLessThanOrEqual(1.9 * 0.045);
    expect(h.submitToFinal.p50.at(-1)).toBe(5);
    expect(h.submitToFinal.p95.at(-1)).toBe(5);
    expect(h.acceptToSubmit.all.samples).toBe(20);
    // A minute without a message has no latency to draw (a gap, not a zero).
    expect(h.acceptToSubmit.p50.at(-2)).toBeNull();
    expect(h.accepted.at(-1)).toBe(20);
    expect(h.delivered.at(-1)).toBe(20);
  });

  it('counts a latency in the minute it ended, and measures a scheduled message from when it was due', () => {
    const { events, clock, history } = fixture();
    const sendAt = START + 10 * MINUTE;
    clock.now = sendAt + 2 * MINUTE + 750;
    events.emit('message.submitted', { message: record('s1', START, [sendAt + 750], { sendAt }) });
    const h = history.snapshot();
    expect(h.acceptToSubmit.p50.at(-1)).toBe(0.75);
    expect(h.acceptToSubmit.p95.at(-1)).toBe(0.75);
    expect(h.submitted.at(-1)).toBe(1);
  });

  it('measures from the first part of a long message, and leaves out a message that ended unsent', () => {
    const { events, clock, history } = fixture();
    clock.now = START + 9_000;
    const long = record('l1', START, [START + 3_000, START + 2_000, START + 4_000]);
    events.emit('message.submitted', { message: long });
    events.emit('message.status', { message: { ...long, state: 'delivered' }, previousState: 'submitted' });
    events.emit('message.status', { message: { ...record('x1', START, [null]), state: 'expired' }, previousState: 'queued' });
    const h = history.snapshot();
    expect(h.acceptToSubmit.all).toEqual({ p50: 2, p95: 2, samples: 1 });
    expect(h.submitToFinal.all).toEqual({ p50: 7, p95: 7, samples: 1 });
    expect(h.failed.at(-1)).toBe(1);
  });

  it('drops a minute from the hour after 60 minutes, and keeps it in the day', () => {
    const { clock, history, life } = fixture();
    life('old', START, 400, 1_000, 'failed');
    clock.now = START + 59 * MINUTE;
    expect(history.snapshot().failed[0]).toBe(1);
    clock.now = START + 60 * MINUTE;
    const h = history.snapshot();
    expect(h.failed.every((n) => n === 0)).toBe(true);
    expect(h.acceptToSubmit.all.samples).toBe(0);
    expect(h.acceptToSubmit.p50.every((p) => p === null)).toBe(true);
    // The day: 96 quarter hours, the message's among them, its latency too.
    expect(h.day.starts).toHaveLength(DAY_STEPS);
    expect(h.day.stepS).toBe(DAY_STEP_MS / 1000);
    expect(h.day.starts.at(-1)).toBe((START + 60 * MINUTE) / 1000);
    expect(h.day.starts.at(-5)).toBe(START / 1000);
    expect(h.day.failed.at(-5)).toBe(1);
    expect(h.day.accepted.at(-5)).toBe(1);
    expect(h.day.acceptToSubmit.p50.at(-5)).toBe(0.4);
    expect(h.day.submitToFinal.all).toEqual({ p50: 1, p95: 1, samples: 1 });
  });

  it('puts a day\'s quarter hours together, and rolls the day over after 24 hours', () => {
    const { clock, history, life } = fixture();
    // Three messages in one quarter hour, minutes apart: one step of the day.
    life('a', START + 1 * MINUTE, 100, 1_000);
    life('b', START + 7 * MINUTE, 200, 2_000);
    life('c', START + 14 * MINUTE, 300, 30_000);
    life('d', START + 15 * MINUTE, 10_000, 1_000);
    clock.now = START + 20 * MINUTE;
    let day = history.snapshot().day;
    expect(day.accepted.slice(-2)).toEqual([3, 1]);
    expect(day.delivered.slice(-2)).toEqual([3, 1]);
    expect(day.acceptToSubmit.p95.slice(-2)).toEqual([0.3, 10]);
    expect(day.submitToFinal.p50.at(-2)).toBeCloseTo(2, 1);
    // 24 hours after the first quarter hour began, it has left the day; the second is the oldest.
    clock.now = START + DAY_STEPS * DAY_STEP_MS;
    day = history.snapshot().day;
    expect(day.starts[0]).toBe((START + DAY_STEP_MS) / 1000);
    expect(day.accepted[0]).toBe(1);
    expect(day.accepted.reduce((a, b) => a + b, 0)).toBe(1);
    expect(day.acceptToSubmit.all).toEqual({ p50: 10, p95: 10, samples: 1 });
    clock.now += DAY_STEP_MS;
    day = history.snapshot().day;
    expect(day.accepted.every((n) => n === 0)).toBe(true);
    expect(day.submitToFinal.all.samples).toBe(0);
  });
});

describe('the latency histogram', () => {
  it('answers within half a bin across milliseconds to hours, exact at the least and greatest', () => {
    for (const ms of [3, 47, 812, 12_345, 3_600_000]) {
      const sketch = new LatencySketch();
      sketch.add(1);
      sketch.add(ms);
      sketch.add(ms * 1.01);
      sketch.add(1e9);
      // Rank 2 of 4 is `ms`; the median lies in its bin.
      expect(Math.abs(sketch.quantile(0.5)! - ms) / ms).toBeLessThan(0.06);
      expect(sketch.quantile(0.01)).toBe(1);
      expect(sketch.quantile(1)).toBe(1e9);
    }
    expect(new LatencySketch().quantile(0.5)).toBeNull();
  });

  it('merges two histograms into the one of all their latencies', () => {
    const [a, b, both] = [new LatencySketch(), new LatencySketch(), new LatencySketch()];
    for (let i = 1; i <= 100; i += 1) {
      (i % 3 === 0 ? a : b).add(i * 37);
      both.add(i * 37);
    }
    a.merge(b);
    expect(a.count).toBe(100);
    expect([a.quantile(0.5), a.quantile(0.95)]).toEqual([both.quantile(0.5), both.quantile(0.95)]);
  });
});

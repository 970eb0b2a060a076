import { describe, expect, it } from 'vitest';
import { DEFAULT_SCHEDULE } from '../../src/dlr/options.js';
import { MAX_RETRY_AFTER_MS, nextAttemptDelay, verdictOf } from '../../src/dlr/schedule.js';

const noJitter = () => 0.5;

describe('DEFAULT_SCHEDULE', () => {
  it('makes 8 attempts spanning about a day, the first at once', () => {
    expect(DEFAULT_SCHEDULE).toHaveLength(8);
    expect(DEFAULT_SCHEDULE[0]).toBe(0);
    const total = DEFAULT_SCHEDULE.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(20 * 3_600_000);
    expect(total).toBeLessThan(36 * 3_600_000);
  });
});

describe('verdictOf', () => {
  it('delivers on any 2xx, stops on 410, retries everything else', () => {
    expect(verdictOf(200)).toBe('delivered');
    expect(verdictOf(204)).toBe('delivered');
    expect(verdictOf(299)).toBe('delivered');
    expect(verdictOf(410)).toBe('gone');
    for (const status of [301, 302, 400, 401, 404, 429, 500, 503]) expect(verdictOf(status)).toBe('retry');
    expect(verdictOf(null)).toBe('retry');
  });
});

describe('nextAttemptDelay', () => {
  const schedule = [0, 50, 100];

  it('follows the schedule and gives up when it runs out', () => {
    expect(nextAttemptDelay(1, schedule, null, noJitter)).toBe(50);
    expect(nextAttemptDelay(2, schedule, null, noJitter)).toBe(100);
    expect(nextAttemptDelay(3, schedule, null, noJitter)).toBeNull();
  });

  it('spreads a delay by at most 10% either way', () => {
    expect(nextAttemptDelay(1, [0, 1000], null, () => 0)).toBe(900);
    expect(nextAttemptDelay(1, [0, 1000], null, () => 0.999999)).toBe(1100);
    for (let i = 0; i < 100; i++) {
      const delay = nextAttemptDelay(1, [0, 1000], null, Math.random)!;
      expect(delay).toBeGreaterThanOrEqual(900);
      expect(delay).toBeLessThanOrEqual(1100);
    }
  });

  it('honours a longer Retry-After, capped at a day, but never adds an attempt', () => {
    expect(nextAttemptDelay(1, schedule, 3_000, noJitter)).toBe(3_000);
    expect(nextAttemptDelay(1, schedule, 10, noJitter)).toBe(50);
    expect(nextAttemptDelay(1, schedule, 7 * 24 * 3_600_000, noJitter)).toBe(MAX_RETRY_AFTER_MS);
    expect(nextAttemptDelay(3, schedule, 3_000, noJitter)).toBeNull();
  });
});

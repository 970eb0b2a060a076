/**
 * The periods of a spend cap: the day and the month of a zone an instant falls in, their
 * counters' keys, and when each ends (the zone's next midnight, across daylight-saving
 * changes, also where the clock skips midnight).
 */
import { describe, expect, it } from 'vitest';
import { SpendCalendar, spendPeriodsAt } from '../../src/lifecycle/spend-periods.js';

const iso = (ms: number): string => new Date(ms).toISOString();

/** The periods at `at` in `zone`, with ISO times. */
function periods(at: string, zone: string) {
  const p = spendPeriodsAt(Date.parse(at), zone);
  return { day: p.day.key, dayEnds: iso(p.day.endsAt), month: p.month.key, monthEnds: iso(p.month.endsAt), dayStarts: iso(p.dayStartsAt) };
}

describe('spend periods', () => {
  it('UTC: the calendar day and month, ending at midnight UTC', () => {
    expect(periods('2026-12-31T23:30:00Z', 'UTC')).toEqual({
      day: 'day:2026-12-31', dayEnds: '2027-01-01T00:00:00.000Z', month: 'month:2026-12', monthEnds: '2027-01-01T00:00:00.000Z', dayStarts: '2026-12-31T00:00:00.000Z',
    });
  });

  it("a zone ahead of UTC: its own date, which may be tomorrow's in UTC", () => {
    expect(periods('2026-11-30T22:00:00Z', 'Africa/Nairobi')).toEqual({
      day: 'day:2026-12-01', dayEnds: '2026-12-01T21:00:00.000Z', month: 'month:2026-12', monthEnds: '2026-12-31T21:00:00.000Z', dayStarts: '2026-11-30T21:00:00.000Z',
    });
  });

  it('a day of a daylight-saving change is 23 hours long, and ends at the midnight of the new offset', () => {
    // New York springs forward at 02:00 on 8 March 2026: the day runs from 05:00 UTC to 04:00 UTC.
    expect(periods('2026-03-08T12:00:00Z', 'America/New_York')).toMatchObject({
      day: 'day:2026-03-08', dayStarts: '2026-03-08T05:00:00.000Z', dayEnds: '2026-03-09T04:00:00.000Z',
    });
  });

  it('where the clock skips midnight, the day starts when it jumps past it', () => {
    // Santiago springs forward at 00:00 on 6 September 2026, to 01:00.
    expect(periods('2026-09-05T12:00:00Z', 'America/Santiago')).toMatchObject({ day: 'day:2026-09-05', dayEnds: '2026-09-06T04:00:00.000Z' });
    expect(periods('2026-09-06T12:00:00Z', 'America/Santiago')).toMatchObject({ day: 'day:2026-09-06', dayStarts: '2026-09-06T04:00:00.000Z' });
  });

  it('a calendar works the periods out again only when the clock leaves its day, either way', () => {
    const calendar = new SpendCalendar('Africa/Nairobi');
    const first = calendar.at(Date.parse('2026-11-30T22:00:00Z'));
    expect(calendar.at(Date.parse('2026-12-01T20:59:59Z'))).toBe(first);
    expect(calendar.at(Date.parse('2026-12-01T21:00:00Z')).day.key).toBe('day:2026-12-02');
    expect(calendar.at(Date.parse('2026-11-30T20:59:59Z')).day.key).toBe('day:2026-11-30');
  });
});

/**
 * The end of a quiet window in a recipient's zone: across midnight, and across the nights a
 * daylight-saving clock springs forward or falls back (Europe/Berlin, America/New_York).
 */
import { describe, expect, it } from 'vitest';
import { assertQuietHours, assertTimeZone, quietHoursEnd } from '../../src/numbers/quiet-hours.js';

const NIGHT = { from: '21:00', to: '08:00' };
const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

describe('quietHoursEnd', () => {
  it('holds a time inside a window across midnight until its end, the next morning or the same one', () => {
    // Nairobi is UTC+3 all year.
    expect(iso(quietHoursEnd(at('2026-06-10T19:30:00Z'), NIGHT, 'Africa/Nairobi'))).toBe('2026-06-11T05:00:00.000Z');
    expect(iso(quietHoursEnd(at('2026-06-10T23:59:00Z'), NIGHT, 'Africa/Nairobi'))).toBe('2026-06-11T05:00:00.000Z');
    expect(iso(quietHoursEnd(at('2026-06-11T04:59:59Z'), NIGHT, 'Africa/Nairobi'))).toBe('2026-06-11T05:00:00.000Z');
  });

  it('lets through a time outside the window, and its very end', () => {
    expect(quietHoursEnd(at('2026-06-11T05:00:00Z'), NIGHT, 'Africa/Nairobi')).toBeNull();
    expect(quietHoursEnd(at('2026-06-11T17:59:00Z'), NIGHT, 'Africa/Nairobi')).toBeNull();
  });

  it('takes a window within one day too', () => {
    const lunch = { from: '12:00', to: '14:00' };
    expect(iso(quietHoursEnd(at('2026-06-11T10:15:00Z'), lunch, 'Africa/Nairobi'))).toBe('2026-06-11T11:00:00.000Z');
    expect(quietHoursEnd(at('2026-06-11T08:00:00Z'), lunch, 'Africa/Nairobi')).toBeNull();
  });

  it('keeps the wall clock across the night Berlin springs forward: 08:00 CEST, an hour less later', () => {
    // 2026-03-29 02:00 CET becomes 03:00 CEST. 22:00 CET on the 28th is 21:00 UTC.
    expect(iso(quietHoursEnd(at('2026-03-28T21:00:00Z'), NIGHT, 'Europe/Berlin'))).toBe('2026-03-29T06:00:00.000Z');
  });

  it('keeps the wall clock across the night Berlin falls back: 08:00 CET, an hour more later', () => {
    // 2026-10-25 03:00 CEST becomes 02:00 CET. 22:00 CEST on the 24th is 20:00 UTC.
    expect(iso(quietHoursEnd(at('2026-10-24T20:00:00Z'), NIGHT, 'Europe/Berlin'))).toBe('2026-10-25T07:00:00.000Z');
  });

  it('ends a window whose end the clock springs over at the jump', () => {
    // New York, 2026-03-08: 02:00 EST becomes 03:00 EDT; 02:30 never happens.
    const early = { from: '01:00', to: '02:30' };
    expect(iso(quietHoursEnd(at('2026-03-08T06:15:00Z'), early, 'America/New_York'))).toBe('2026-03-08T07:00:00.000Z');
  });

  it('ends a window whose end the clock reads twice at the first reading', () => {
    // New York, 2026-11-01: 02:00 EDT becomes 01:00 EST; 01:30 happens twice, first at 05:30 UTC.
    const late = { from: '23:00', to: '01:30' };
    expect(iso(quietHoursEnd(at('2026-11-01T04:00:00Z'), late, 'America/New_York'))).toBe('2026-11-01T05:30:00.000Z');
  });
});

describe('the quiet-hours options', () => {
  it('refuses a malformed window and an unknown zone, naming the option', () => {
    expect(() => assertQuietHours('p', { from: '9:00', to: '08:00' })).toThrow(/quietHours must be \{ from: 'HH:MM'/);
    expect(() => assertQuietHours('p', { from: '21:00', to: '21:00' })).toThrow(/the same time/);
    expect(() => assertQuietHours('p', { from: '21:00', to: '08:00', zone: 'x' })).toThrow(/unknown field "zone"/);
    expect(() => assertTimeZone('p', 'Mars/Olympus')).toThrow(/timeZone must be an IANA time zone/);
    expect(() => assertTimeZone('p', 'Africa/Nairobi')).not.toThrow();
  });
});

import { describe, expect, it } from 'vitest';
import { newMessageRef } from '../../src/outbox/message-ref.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newMessageRef', () => {
  it('is a lower-case UUID version 7 whose first 48 bits are the time in ms', () => {
    const now = Date.UTC(2026, 10, 26, 1, 2, 3, 456);
    const ref = newMessageRef(now);
    expect(ref).toMatch(V7);
    expect(parseInt(ref.replace(/-/g, '').slice(0, 12), 16)).toBe(now);
  });

  it('never repeats, within one millisecond too', () => {
    const refs = new Set<string>();
    const now = Date.now();
    for (let i = 0; i < 5_000; i++) refs.add(newMessageRef(now));
    expect(refs.size).toBe(5_000);
    for (const ref of refs) expect(ref).toMatch(V7);
  });

  it('sorts refs made one after another by the clock in the order they were made', () => {
    const refs = Array.from({ length: 1_000 }, () => newMessageRef());
    expect([...refs].sort()).toEqual(refs);
  });

  it('sorts refs of a later millisecond after those of an earlier one', () => {
    const earlier = Array.from({ length: 50 }, () => newMessageRef(1_000));
    const later = Array.from({ length: 50 }, () => newMessageRef(1_001));
    expect([...later, ...earlier].sort()).toEqual([...earlier.sort(), ...later.sort()]);
  });

  it('uses the clock by default', () => {
    const before = Date.now();
    const ref = newMessageRef();
    const stamped = parseInt(ref.replace(/-/g, '').slice(0, 12), 16);
    expect(stamped).toBeGreaterThanOrEqual(before);
    expect(stamped).toBeLessThanOrEqual(Date.now());
  });
});

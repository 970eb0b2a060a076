import { describe, expect, it } from 'vitest';
import { relativeTime } from '../../src/delivery/smpp/submit-fields.js';

describe('SMPP validity_period', () => {
  it.each([
    [30, '000000000030000R'],
    [600, '000000001000000R'],
    [3_661.2, '000000010102000R'],
    [172_800, '000002000000000R'],
    [0, '000000000001000R'],
  ])('%d s is the relative time %s (YYMMDDhhmmss000R, SMPP 3.4 7.1.1.2)', (seconds, wire) => {
    expect(relativeTime(seconds)).toBe(wire);
  });
});

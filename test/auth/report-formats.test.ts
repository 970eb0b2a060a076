/**
 * Where a report's format comes from when it is sent: a `staticKeys` table (every instance
 * has it from its start, so a report on a message accepted before a restart or by another
 * instance goes out right), else the principals a host's own verifier returned.
 */
import { describe, expect, it } from 'vitest';
import { staticKeys, type Principal } from '../../src/index.js';
import { ReportFormats } from '../../src/auth/report-formats.js';

describe('ReportFormats', () => {
  it("reads a staticKeys table's formats before any request", () => {
    const formats = new ReportFormats(staticKeys([{ key: 'a', id: 'flat-co', reportFormat: 'flat' }, { key: 'b', id: 'plain-co' }]));
    expect(formats.of('flat-co')).toBe('flat');
    expect(formats.of('plain-co')).toBe('envelope');
    expect(formats.of('nobody')).toBe('envelope');
  });

  it("notes the formats a host's own verifier returns, sync or async, and their changes", async () => {
    let current: Principal = { id: 'acme', reportFormat: 'flat' };
    const formats = new ReportFormats(() => current);
    const verify = formats.watching(() => current);
    expect(formats.of('acme')).toBe('envelope');
    expect(await verify('key')).toBe(current);
    expect(formats.of('acme')).toBe('flat');
    current = { id: 'acme' };
    await verify('key');
    expect(formats.of('acme')).toBe('envelope');

    const asynchronous = new ReportFormats(async () => null);
    const verifyAsync = asynchronous.watching(async (key) => (key === 'k' ? { id: 'beta', reportFormat: 'flat' as const } : null));
    expect(await verifyAsync('k')).toEqual({ id: 'beta', reportFormat: 'flat' });
    expect(await verifyAsync('unknown')).toBeNull();
    expect(asynchronous.of('beta')).toBe('flat');
  });
});

import { describe, expect, it } from 'vitest';
import { DEFAULT_SCHEDULE, resolveDlrOptions, type DlrOptions } from '../../src/dlr/options.js';

describe('resolveDlrOptions', () => {
  it('fills every default', () => {
    const config = resolveDlrOptions();
    expect(config).toMatchObject({
      secret: null,
      schedule: DEFAULT_SCHEDULE,
      timeoutMs: 15_000,
      concurrency: 64,
      perHostConcurrency: 8,
      allowance: { allowPrivate: false },
      pollIntervalMs: 500,
      leaseMs: 35_000,
      batchSize: 64,
    });
    expect(config.userAgent).toMatch(/^sms-outbox\/\d+\.\d+\.\d+/);
  });

  it('keeps what is given', () => {
    const config = resolveDlrOptions({
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      schedule: [0, 50, 100],
      timeoutMs: 1000,
      allowPrivateAddresses: ['127.0.0.0/8'],
      leaseMs: 5000,
    });
    expect(config.schedule).toEqual([0, 50, 100]);
    expect(config.allowance.allowPrivate).toEqual(['127.0.0.0/8']);
    expect(config.leaseMs).toBe(5000);
  });

  it('suggests the option a typo meant', () => {
    expect(() => resolveDlrOptions({ timeout: 5 } as DlrOptions)).toThrow('dlr: unknown option `timeout`. Did you mean `timeoutMs`?');
    expect(() => resolveDlrOptions({ allowPrivateAddress: true } as DlrOptions)).toThrow(/Did you mean `allowPrivateAddresses`/);
    expect(() => resolveDlrOptions({ zzzzzzzz: 1 } as DlrOptions)).toThrow(/unknown option `zzzzzzzz`\.$/);
  });

  it.each<[DlrOptions, RegExp]>([
    [{ timeoutMs: 0 }, /timeoutMs/],
    [{ concurrency: 1.5 }, /concurrency/],
    [{ perHostConcurrency: -1 }, /perHostConcurrency/],
    [{ pollIntervalMs: Number.NaN }, /pollIntervalMs/],
    [{ batchSize: 0 }, /batchSize/],
    [{ schedule: [] }, /schedule/],
    [{ schedule: [5, 10] }, /schedule\[0\] must be 0/],
    [{ schedule: [0, -1] }, /schedule\[1\]/],
    [{ timeoutMs: 5000, leaseMs: 5000 }, /leaseMs/],
    [{ secret: 'whsec_***' }, /secret/],
    [{ secret: '' }, /secret/],
    [{ allowPrivateAddresses: ['127.0.0.0/99'] }, /127\.0\.0\.0\/99/],
    [{ allowPrivateAddresses: 'yes' as unknown as boolean }, /allowPrivateAddresses/],
  ])('refuses %j', (options, message) => {
    expect(() => resolveDlrOptions(options)).toThrow(TypeError);
    expect(() => resolveDlrOptions(options)).toThrow(message);
  });
});

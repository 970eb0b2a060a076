import { describe, expect, it } from 'vitest';
import { parseSmppUrl } from '../../src/delivery/smpp/url.js';
import { SmppDelivery } from '../../src/delivery/smpp/adapter.js';

describe('parseSmppUrl', () => {
  it('reads user, password, host, port and system_type, percent-decoded', () => {
    expect(parseSmppUrl('smpp://us%40r:p%3Ass@smsc.example.com:2776?system_type=VMA')).toEqual({
      host: 'smsc.example.com',
      port: 2776,
      tls: false,
      systemId: 'us@r',
      password: 'p:ss',
      systemType: 'VMA',
    });
  });

  it('defaults the port by scheme and unwraps IPv6 hosts', () => {
    expect(parseSmppUrl('smpp://a@127.0.0.1')).toMatchObject({ port: 2775, tls: false });
    expect(parseSmppUrl('ssmpp://a@[::1]')).toMatchObject({ host: '::1', port: 3550, tls: true });
  });

  it('refuses other schemes and paths, without echoing the password', () => {
    expect(() => parseSmppUrl('http://a:b@host')).toThrow(/scheme/);
    expect(() => parseSmppUrl('smpp://a:hunter2@host/x')).toThrow(/unexpected path/);
    expect(() => parseSmppUrl('smpp://a:hunter2@host/x')).not.toThrow(/hunter2/);
  });
});

describe('SmppDelivery options', () => {
  it('throws at construction on a typo, with a hint', () => {
    expect(() => new SmppDelivery({ url: 'smpp://a:b@h', windw: 5 } as never)).toThrow('SmppDelivery: unknown option `windw`. Did you mean `window`?');
  });

  it('needs a host and a system id', () => {
    expect(() => new SmppDelivery({ systemId: 'x' })).toThrow(/host/);
    expect(() => new SmppDelivery({ host: 'h' })).toThrow(/systemId/);
  });

  it('refuses nonsense values', () => {
    expect(() => new SmppDelivery({ url: 'smpp://a@h', window: 0 })).toThrow(/window/);
    expect(() => new SmppDelivery({ url: 'smpp://a@h', tps: 0 })).toThrow(/tps/);
    expect(() => new SmppDelivery({ url: 'smpp://a@h', concatenation: 'x' as never })).toThrow(/concatenation/);
    expect(() => new SmppDelivery({ url: 'smpp://a@h', binds: 0 })).toThrow(/"binds" must be an integer 1..64, got 0/);
    expect(() => new SmppDelivery({ url: 'smpp://a@h', binds: 1.5 })).toThrow(/binds/);
  });

  it('reports its tps to the worker as the whole adapter\'s, whatever its binds', () => {
    expect(new SmppDelivery({ url: 'smpp://a@h', tps: 40, binds: 4 }).submitsPerSecond).toBe(40);
    expect(new SmppDelivery({ url: 'smpp://a@h', binds: 4 }).submitsPerSecond).toBeUndefined();
  });

  it('rejects submit before start as retryable', async () => {
    const adapter = new SmppDelivery({ url: 'smpp://a@h' });
    await expect(adapter.submit({} as never)).rejects.toMatchObject({ name: 'DeliveryError', permanent: false });
  });
});

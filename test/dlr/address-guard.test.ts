import { describe, expect, it } from 'vitest';
import { addressProblem, callbackUrlProblem, compileAllowList, isBlockedAddress } from '../../src/dlr/address-guard.js';

const closed = { allowPrivate: false } as const;

describe('isBlockedAddress', () => {
  it.each([
    ['10.0.0.1'],
    ['10.255.255.255'],
    ['172.16.0.1'],
    ['172.31.255.254'],
    ['192.168.1.1'],
    ['127.0.0.1'],
    ['127.255.0.9'],
    ['169.254.169.254'],
    ['100.64.0.1'],
    ['100.127.255.255'],
    ['0.0.0.0'],
    ['0.1.2.3'],
    ['224.0.0.1'],
    ['239.255.255.250'],
    ['255.255.255.255'],
    ['240.0.0.1'],
    ['192.0.2.5'],
    ['198.18.0.1'],
    ['::'],
    ['::1'],
    ['0:0:0:0:0:0:0:1'],
    ['fe80::1'],
    ['fe80::1%eth0'],
    ['febf::1'],
    ['fc00::1'],
    ['fd12:3456::1'],
    ['ff02::1'],
    ['::ffff:127.0.0.1'],
    ['::ffff:7f00:1'],
    ['::ffff:a9fe:a9fe'],
    ['::ffff:10.0.0.1'],
    ['::ffff:0:127.0.0.1'],
    ['::127.0.0.1'],
    ['64:ff9b::127.0.0.1'],
    ['64:ff9b::a00:1'],
    ['64:ff9b:1::1'],
    ['2002:7f00:1::'],
    ['2002:c0a8:101::1'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe'], // Teredo: client 127.0.0.1, stored inverted
    // 6to4 carrying a public IPv4 address: "Globally Reachable: N/A" in the IANA IPv6
    // special-purpose registry, so all of 2002::/16 is refused.
    ['2002:808:808::1'],
    ['2001:db8::1'],
    ['not an ip'],
    [''],
  ])('blocks %s', (ip) => {
    expect(isBlockedAddress(ip)).toBe(true);
  });

  it.each([
    ['8.8.8.8'],
    ['93.184.216.34'],
    ['172.32.0.1'],
    ['100.128.0.1'],
    ['192.169.0.1'],
    ['1.1.1.1'],
    ['2606:4700:4700::1111'],
    ['2001:4860:4860::8888'],
    ['::ffff:8.8.8.8'],
    ['64:ff9b::8.8.8.8'],
  ])('lets %s through', (ip) => {
    expect(isBlockedAddress(ip)).toBe(false);
  });
});

describe('addressProblem', () => {
  it('refuses an internal address unless allowed', () => {
    expect(addressProblem('127.0.0.1', closed)).toMatch(/internal/);
    expect(addressProblem('127.0.0.1', { allowPrivate: true })).toBeNull();
    expect(addressProblem('8.8.8.8', closed)).toBeNull();
  });

  it('allows exactly what an allowlist names', () => {
    const allow = { allowPrivate: ['127.0.0.0/8', '::1/128', '10.1.2.3'] };
    expect(addressProblem('127.0.0.1', allow)).toBeNull();
    expect(addressProblem('127.9.9.9', allow)).toBeNull();
    expect(addressProblem('::1', allow)).toBeNull();
    expect(addressProblem('::ffff:127.0.0.1', allow)).toBeNull();
    expect(addressProblem('10.1.2.3', allow)).toBeNull();
    expect(addressProblem('10.1.2.4', allow)).not.toBeNull();
    expect(addressProblem('169.254.169.254', allow)).not.toBeNull();
    expect(addressProblem('fe80::1', allow)).not.toBeNull();
  });

  it('rejects a malformed allowlist entry with the entry named', () => {
    expect(() => compileAllowList(['127.0.0.0/33'])).toThrow(/127\.0\.0\.0\/33/);
    expect(() => compileAllowList(['localhost'])).toThrow(/localhost/);
    expect(() => compileAllowList(['::1/129'])).toThrow(TypeError);
  });
});

describe('callbackUrlProblem', () => {
  it.each([
    ['http://127.1/dlr'],
    ['http://0x7f000001/dlr'],
    ['http://2130706433/dlr'],
    ['http://0177.0.0.1/dlr'],
    ['http://[::1]/dlr'],
    ['http://[::ffff:7f00:1]/dlr'],
    ['http://[::ffff:127.0.0.1]:8080/dlr'],
    ['http://169.254.169.254/latest/meta-data/'],
    ['http://10.0.0.1/'],
    ['http://100.64.0.1/'],
    ['http://[fc00::1]/'],
    ['http://[fe80::1]/'],
    ['http://0.0.0.0/'],
    ['http://0/'],
    ['https://192.168.0.10/'],
    ['http://255.255.255.255/'],
    ['http://[64:ff9b::7f00:1]/'],
    ['http://localhost:3000/dlr'],
    ['http://api.localhost/dlr'],
    ['http://LOCALHOST./dlr'],
  ])('refuses the internal address %s', (url) => {
    expect(callbackUrlProblem(url, closed)).toMatch(/internal/);
  });

  it('refuses credentials, other schemes and relative URLs', () => {
    expect(callbackUrlProblem('http://user:pass@example.com/dlr', closed)).toMatch(/credentials/);
    expect(callbackUrlProblem('https://user@example.com/dlr', closed)).toMatch(/credentials/);
    expect(callbackUrlProblem('ftp://example.com/dlr', closed)).toMatch(/http/);
    expect(callbackUrlProblem('javascript:alert(1)', closed)).toMatch(/http/);
    expect(callbackUrlProblem('file:///etc/passwd', closed)).toMatch(/http/);
    expect(callbackUrlProblem('/dlr', closed)).toMatch(/absolute/);
    expect(callbackUrlProblem('example.com/dlr', closed)).toMatch(/absolute/);
    expect(callbackUrlProblem('', closed)).toMatch(/absolute/);
  });

  it('accepts public URLs and names (names are checked when dialled)', () => {
    expect(callbackUrlProblem('https://client.example/dlr', closed)).toBeNull();
    expect(callbackUrlProblem('http://8.8.8.8:8080/dlr?x=1', closed)).toBeNull();
    expect(callbackUrlProblem('https://[2606:4700:4700::1111]/dlr', closed)).toBeNull();
    expect(callbackUrlProblem('http://internal.example/dlr', closed)).toBeNull();
  });

  it('accepts an internal address the host allows', () => {
    const allow = { allowPrivate: ['127.0.0.0/8'] };
    expect(callbackUrlProblem('http://127.0.0.1:3000/dlr', allow)).toBeNull();
    expect(callbackUrlProblem('http://127.1:3000/dlr', allow)).toBeNull();
    expect(callbackUrlProblem('http://localhost:3000/dlr', allow)).toBeNull();
    expect(callbackUrlProblem('http://10.0.0.1/dlr', allow)).not.toBeNull();
    expect(callbackUrlProblem('http://10.0.0.1/dlr', { allowPrivate: true })).toBeNull();
  });
});

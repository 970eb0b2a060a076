/**
 * The names the demo answers to in the Host header, by the address it listens on: what a
 * DNS-rebinding page's requests are told apart by.
 */
import { hostname, networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { allowedHostNames, hostName } from '../../demo/host-guard.js';

describe('the demo\u2019s Host names', () => {
  it('reads a Host header\u2019s name: no port, no brackets, any case, no final dot', () => {
    expect(hostName('localhost:3000')).toBe('localhost');
    expect(hostName('[::1]:3000')).toBe('::1');
    expect(hostName('LocalHost.')).toBe('localhost');
    expect(hostName('127.0.0.1')).toBe('127.0.0.1');
    expect(hostName('evil.example:3000')).toBe('evil.example');
  });

  it('on loopback, answers the loopback names only', () => {
    const names = allowedHostNames('127.0.0.1');
    expect([...names].sort()).toEqual(['127.0.0.1', '::1', 'localhost']);
  });

  it('on a name or address it was given, answers that too, and the names SMS_ALLOWED_HOSTS adds', () => {
    expect(allowedHostNames('gateway.lan', ['Demo.Example:8080'])).toEqual(new Set(['localhost', '127.0.0.1', '::1', 'gateway.lan', 'demo.example']));
    expect(allowedHostNames('::1').has('::1')).toBe(true);
  });

  it('on every interface, answers this machine\u2019s name and addresses, and nothing else', () => {
    const names = allowedHostNames('0.0.0.0');
    expect(names.has(hostname().toLowerCase())).toBe(true);
    for (const info of Object.values(networkInterfaces()).flat()) expect(names.has(info!.address.toLowerCase())).toBe(true);
    expect(names.has('0.0.0.0')).toBe(false);
    expect(names.has('evil.example')).toBe(false);
  });
});

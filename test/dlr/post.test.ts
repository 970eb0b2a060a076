import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { USER_AGENT, type HostResolver } from '../../src/dlr/options.js';
import { MAX_RESPONSE_BYTES, parseRetryAfter, postCallback } from '../../src/dlr/post.js';
import { startReceiver, type Receiver } from './helpers.js';

const loopback = { allowPrivate: ['127.0.0.0/8'] };
const closed = { allowPrivate: false };
const receivers: Receiver[] = [];

async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const started = await startReceiver(...args);
  receivers.push(started);
  return started;
}

afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

/** Resolves every name to `addresses`, as a hostile or rebinding DNS server might. */
function resolveTo(...addresses: string[]): HostResolver {
  return async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
}

describe('postCallback', () => {
  it('POSTs the exact body with JSON, user-agent and extra headers', async () => {
    const r = await receiver();
    const result = await postCallback({
      url: `${r.origin}/dlr?k=1`,
      body: '{"caf\u00e9":1}',
      headers: { 'webhook-id': 'uid-1' },
      allow: loopback,
    });
    expect(result).toMatchObject({ statusCode: 200, error: null, retryAfterMs: null });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(r.requests).toHaveLength(1);
    const [request] = r.requests;
    expect(request!.url).toBe('/dlr?k=1');
    expect(request!.body).toBe('{"caf\u00e9":1}');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['user-agent']).toBe(USER_AGENT);
    expect(request!.headers['webhook-id']).toBe('uid-1');
  });

  it('does not follow a redirect, and reports it as a failure', async () => {
    const target = await receiver();
    const r = await receiver(() => ({ status: 302, headers: { location: `${target.origin}/elsewhere` } }));
    const result = await postCallback({ url: `${r.origin}/dlr`, body: '{}', allow: loopback });
    expect(result.statusCode).toBe(302);
    expect(result.error).toMatch(/redirect not followed/);
    expect(target.requests).toHaveLength(0);
  });

  it('reads Retry-After in seconds and as an HTTP date', async () => {
    const r = await receiver((n) => ({
      status: 429,
      headers: { 'retry-after': n === 0 ? '120' : new Date(Date.now() + 60_000).toUTCString() },
    }));
    const first = await postCallback({ url: r.origin, body: '{}', allow: loopback });
    expect(first).toMatchObject({ statusCode: 429, retryAfterMs: 120_000 });
    const second = await postCallback({ url: r.origin, body: '{}', allow: loopback });
    expect(second.retryAfterMs).toBeGreaterThan(55_000);
    expect(second.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('times out a receiver that does not answer, in total', async () => {
    const r = await receiver(() => ({ status: 200, delayMs: 10_000 }));
    const result = await postCallback({ url: r.origin, body: '{}', allow: loopback, timeoutMs: 200 });
    expect(result.statusCode).toBeNull();
    expect(result.error).toMatch(/timed out after 200 ms/);
    expect(result.durationMs).toBeLessThan(2_000);
  });

  it('reads at most 64 KiB of a huge response body', async () => {
    let written = 0;
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(16 * 1024, 97);
      // Endless body: the sender must stop reading, not wait for the end.
      const pump = () => {
        let more = true;
        while (!res.destroyed && more) {
          written += chunk.length;
          more = res.write(chunk);
        }
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const result = await postCallback({ url: `http://127.0.0.1:${port}/`, body: '{}', allow: loopback, timeoutMs: 5_000 });
      expect(result).toMatchObject({ statusCode: 200, error: null });
      expect(written).toBeGreaterThan(MAX_RESPONSE_BYTES);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('verifies an HTTPS receiver’s certificate: a self-signed one gets nothing', async () => {
    const tls = (name: string): Buffer => readFileSync(new URL(`../fixtures/tls/self-signed.${name}`, import.meta.url));
    let requests = 0;
    const server = createTlsServer({ key: tls('key'), cert: tls('crt') }, (req, res) => {
      requests++;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const result = await postCallback({ url: `https://127.0.0.1:${port}/dlr`, body: '{}', allow: loopback });
      expect(result.statusCode).toBeNull();
      expect(result.error).toMatch(/SELF_SIGNED_CERT/);
      expect(requests).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('reports a refused connection as an error without a status', async () => {
    const r = await receiver();
    const port = r.port;
    await r.close();
    receivers.length = 0;
    const result = await postCallback({ url: `http://127.0.0.1:${port}/`, body: '{}', allow: loopback });
    expect(result.statusCode).toBeNull();
    expect(result.error).toMatch(/ECONNREFUSED/);
  });
});

describe('postCallback address guard', () => {
  it.each([
    ['127.0.0.1'],
    ['127.1'],
    ['0x7f000001'],
    ['2130706433'],
    ['[::1]'],
    ['[::ffff:7f00:1]'],
    ['localhost'],
  ])('never dials the loopback receiver through %s when private addresses are not allowed', async (host) => {
    const r = await receiver();
    const result = await postCallback({ url: `http://${host}:${r.port}/dlr`, body: '{}', allow: closed });
    expect(result.statusCode).toBeNull();
    expect(result.error).toMatch(/^blocked/);
    expect(r.requests).toHaveLength(0);
  });

  it('blocks a name that resolves to an internal address, when dialled', async () => {
    const r = await receiver();
    const result = await postCallback({
      url: `http://callbacks.client.example:${r.port}/dlr`,
      body: '{}',
      allow: closed,
      resolve: resolveTo('127.0.0.1'),
    });
    expect(result.statusCode).toBeNull();
    expect(result.error).toMatch(/^blocked: callbacks\.client\.example resolves to address 127\.0\.0\.1/);
    expect(r.requests).toHaveLength(0);
  });

  it('refuses a name if any of its addresses is internal (no dialling the public one either)', async () => {
    const result = await postCallback({
      url: 'http://rebind.example/dlr',
      body: '{}',
      allow: closed,
      resolve: resolveTo('93.184.216.34', '169.254.169.254'),
    });
    expect(result.error).toMatch(/169\.254\.169\.254/);
  });

  it('refuses IPv6 forms of internal addresses a resolver returns', async () => {
    for (const address of ['::ffff:127.0.0.1', '64:ff9b::a9fe:a9fe', 'fd00::1', 'fe80::1']) {
      const result = await postCallback({ url: 'http://v6.example/', body: '{}', allow: closed, resolve: resolveTo(address) });
      expect(result.error).toMatch(/^blocked/);
    }
  });

  it('dials the address it checked: an allowed name reaches the receiver through the resolver', async () => {
    const r = await receiver();
    const result = await postCallback({
      url: `http://callbacks.client.example:${r.port}/dlr`,
      body: '{}',
      allow: loopback,
      resolve: resolveTo('127.0.0.1'),
    });
    expect(result).toMatchObject({ statusCode: 200, error: null });
    expect(r.requests).toHaveLength(1);
    expect(r.requests[0]!.headers.host).toBe(`callbacks.client.example:${r.port}`);
  });

  it('reports a name that does not resolve', async () => {
    const result = await postCallback({ url: 'http://nothing.example/', body: '{}', allow: closed, resolve: resolveTo() });
    expect(result.statusCode).toBeNull();
    expect(result.error).toMatch(/ENOTFOUND/);
  });

  it('refuses credentials and other schemes without sending', async () => {
    expect((await postCallback({ url: 'http://user:pass@example.com/', body: '{}', allow: closed })).error).toMatch(/credentials/);
    expect((await postCallback({ url: 'ftp://example.com/', body: '{}', allow: closed })).error).toMatch(/http/);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and dates, and ignores junk', () => {
    const now = Date.parse('2024-01-01T00:00:00Z');
    expect(parseRetryAfter('30', now)).toBe(30_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Mon, 01 Jan 2024 00:02:00 GMT', now)).toBe(120_000);
    expect(parseRetryAfter('Sun, 31 Dec 2023 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(undefined, now)).toBeNull();
    expect(parseRetryAfter('-5', now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter('1.5', now)).toBeNull();
  });
});

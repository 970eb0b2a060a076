import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { RedisBudgetStore } from '../../src/http/rate-limit/redis-budget-store.js';
import { eventually } from '../helpers/poll.js';
import { connectTestRedis, REDIS_URL } from '../helpers/services.js';

// Several instances share one Redis, as processes behind a load balancer would; every key
// of this run lives under one fresh prefix, deleted at the end.

const fixture = fileURLToPath(new URL('../fixtures/rate-limited-host.ts', import.meta.url));

const redis = await connectTestRedis('rate-limit Redis tests');
const { client, sendCommand, prefix: PREFIX, unreachable } = redis;
afterAll(() => redis.close());

interface Host {
  port: number;
  child: ChildProcessWithoutNullStreams;
}
const hosts: Host[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map(stop));
});

/** Starts one gateway process on the shared Redis and resolves once it prints its port. */
async function startHost(runPrefix: string, limits: { requests: number; messages: number; failed: number }): Promise<Host> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
    env: {
      ...process.env,
      REDIS_URL,
      RL_PREFIX: runPrefix,
      RL_REQUESTS: String(limits.requests),
      RL_MESSAGES: String(limits.messages),
      RL_FAILED: String(limits.failed),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`host did not start within 20 s: ${stderr}`));
    }, 20_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /^port (\d+)$/m.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`host exited with ${String(code)} before listening: ${stderr}`));
    });
  });
  const host = { port, child };
  hosts.push(host);
  return host;
}

/** Ends the host's stdin (it closes and exits by itself); kills it if it does not within 10 s. */
async function stop(host: Host): Promise<void> {
  if (host.child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => host.child.once('exit', () => resolve()));
  host.child.stdin.end();
  const timer = setTimeout(() => host.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

async function send(host: Host, key: string, count = 1, ip = '192.0.2.1'): Promise<Response> {
  const messages = Array.from({ length: count }, (_, i) => ({ recipient: `2547${String(10_000_000 + i)}`, message: 'Hi' }));
  return fetch(`http://127.0.0.1:${host.port}/api/outbox/create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, 'x-forwarded-for': ip },
    body: JSON.stringify({ profile_code: '12345', messages }),
  });
}

(unreachable === null ? describe : describe.skip)('rate limits shared through Redis', () => {
  it('two instances in two processes enforce one combined request limit', async () => {
    const runPrefix = `${PREFIX}requests-run:`;
    const limits = { requests: 10, messages: 10_000, failed: 20 };
    const [a, b] = await Promise.all([startHost(runPrefix, limits), startHost(runPrefix, limits)]);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => send(i % 2 === 0 ? a! : b!, 'shared-key')),
    );
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(2);
    const refused = answers.find((res) => res.status === 429)!;
    expect(await refused.json()).toEqual({ details: expect.stringMatching(/^Too many requests: this key may make 10 per 1 minute/), code: 'RATE_LIMITED' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit')).toMatch(/^"requests"; r=0; t=\d+$/);
    expect(refused.headers.get('x-ratelimit-limit')).toBeNull();
    // The other key's count is its own, on both instances.
    expect((await send(a!, 'second-key')).status).toBe(200);
    expect((await send(b!, 'second-key')).status).toBe(200);
  });

  it('two instances share one message budget, and a refused batch takes nothing from it', async () => {
    const runPrefix = `${PREFIX}budget-run:`;
    const limits = { requests: 100, messages: 15, failed: 20 };
    const [a, b] = await Promise.all([startHost(runPrefix, limits), startHost(runPrefix, limits)]);
    expect((await send(a!, 'shared-key', 10)).status).toBe(200);
    const refused = await send(b!, 'shared-key', 10);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ details: expect.stringMatching(/^Message budget exceeded: 10 messages asked, 5 of 15 left/), code: 'RATE_LIMITED' });
    expect(refused.headers.get('ratelimit')).toMatch(/"messages"; r=5; t=\d+/);
    expect((await send(b!, 'shared-key', 5)).status).toBe(200);
    expect((await send(a!, 'shared-key', 1)).status).toBe(429);
    expect((await send(a!, 'shared-key', 16)).status).toBe(422);
  });

  it('failed attempts on one instance block the address on the other', async () => {
    const runPrefix = `${PREFIX}failed-run:`;
    const limits = { requests: 100, messages: 10_000, failed: 3 };
    const [a, b] = await Promise.all([startHost(runPrefix, limits), startHost(runPrefix, limits)]);
    expect((await send(a!, 'wrong-1', 1, '203.0.113.5')).status).toBe(401);
    expect((await send(b!, 'wrong-2', 1, '203.0.113.5')).status).toBe(401);
    expect((await send(a!, 'wrong-3', 1, '203.0.113.5')).status).toBe(401);
    const blocked = await send(b!, 'shared-key', 1, '203.0.113.5');
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('ratelimit')).toMatch(/^"failed-auth"; r=0; t=(899|900)$/);
    expect((await send(b!, 'shared-key', 1, '203.0.113.6')).status).toBe(200);
  });
});

(unreachable === null ? describe : describe.skip)('RedisBudgetStore', () => {
  it('never lets concurrent takes share the same room', async () => {
    const store = new RedisBudgetStore({ sendCommand, prefix: `${PREFIX}store:` });
    const results = await Promise.all(Array.from({ length: 50 }, () => store.take('k', 3, 100, 60_000)));
    expect(results.filter((result) => result.taken)).toHaveLength(33);
    expect(Math.max(...results.map((result) => result.used))).toBe(99);
    const ttl = await client.pTTL(`${PREFIX}store:k`);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    const refused = await store.take('k', 2, 100, 60_000);
    expect(refused).toMatchObject({ taken: false, used: 99 });
    expect(refused.resetTime.getTime() - Date.now()).toBeGreaterThan(50_000);
    await store.reset('k');
    expect(await store.take('k', 100, 100, 60_000)).toMatchObject({ taken: true, used: 100 });
  });

  it('gives back into the running window, never below 0, keeping its expiry; a key with no window stays absent', async () => {
    const store = new RedisBudgetStore({ sendCommand, prefix: `${PREFIX}store:` });
    await store.take('back', 7, 10, 60_000);
    await store.giveBack('back', 4);
    expect(await store.take('back', 7, 10, 60_000)).toMatchObject({ taken: true, used: 10 });
    await store.giveBack('back', 25);
    expect(await client.get(`${PREFIX}store:back`)).toBe('0');
    const ttl = await client.pTTL(`${PREFIX}store:back`);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    await store.giveBack('never-taken', 3);
    expect(await client.exists(`${PREFIX}store:never-taken`)).toBe(0);
  });

  it('starts a new window once the old one ends', async () => {
    const store = new RedisBudgetStore({ sendCommand, prefix: `${PREFIX}store:` });
    expect((await store.take('short', 5, 5, 150)).taken).toBe(true);
    expect((await store.take('short', 1, 5, 150)).taken).toBe(false);
    // Redis ends the window by its own clock, which fake timers cannot move: poll for it.
    const again = await eventually(() => store.take('short', 1, 5, 150), { until: (result) => result.taken, intervalMs: 20, what: 'a new window' });
    expect(again).toMatchObject({ taken: true, used: 1 });
  });

  it('loads its script again when the server has forgotten it (NOSCRIPT)', async () => {
    const sent: string[] = [];
    let forget = false;
    const store = new RedisBudgetStore({
      prefix: `${PREFIX}store:`,
      sendCommand: async (...args) => {
        sent.push(args[0]!);
        if (forget && args[0] === 'EVALSHA') {
          forget = false;
          throw new Error('NOSCRIPT No matching script. Please use EVAL.');
        }
        return sendCommand(...args);
      },
    });
    expect((await store.take('noscript', 1, 10, 60_000)).used).toBe(1);
    forget = true;
    expect((await store.take('noscript', 1, 10, 60_000)).used).toBe(2);
    expect(sent).toEqual(['SCRIPT', 'EVALSHA', 'EVALSHA', 'SCRIPT', 'EVALSHA']);
  });
});

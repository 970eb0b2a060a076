/**
 * `npm start` as a new user runs it: the literal npm script in a child process, no key and
 * no HOST in its environment. It must listen on loopback only (its page carries the key)
 * and print the generated key as a line bash can `export`. And HOST must do what README
 * says: listen on the address given, with a warning.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo, stopDemo } from '../helpers/demo.js';
import { eventually } from '../helpers/poll.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../..', import.meta.url));

/**
 * This machine's non-loopback addresses a socket can reach without a scope id. IPv6
 * link-local ones (fe80::/10) are left out: connecting to them needs the interface named.
 */
function otherLocalAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((info) => info !== undefined && !info.internal && !(info.family === 'IPv6' && info.scopeid !== 0))
    .map((info) => info!.address);
}

/** Resolves with the error code of a TCP connection to `address:port`, or 'connected'. */
function tryConnect(address: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port });
    socket.setTimeout(5_000, () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? String(error)));
  });
}

/** A running `npm start`, in its own process group (npm, sh, tsx and node under it). */
interface NpmStart {
  child: ChildProcess;
  output: () => string;
}

function npmStart(env: Record<string, string>): NpmStart {
  const base = { ...process.env };
  // A new user's shell: no key and no address chosen.
  delete base.HOST;
  delete base.SMS_API_KEY;
  let output = '';
  const child = spawn('npm', ['start'], {
    cwd: REPO,
    env: { ...base, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so the test can stop npm and everything it started at once.
    detached: true,
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

/** Resolves once `pattern` is in the output (its match), rejects on exit or after 30 s. */
function waitForOutput(started: NpmStart, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(started.output());
      if (match === null) return;
      done();
      resolve(match);
    };
    const exited = (code: number | null) => {
      done();
      reject(new Error(`npm start exited (${code}) before printing ${pattern}:\n${started.output()}`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`npm start did not print ${pattern} within 30 s:\n${started.output()}`));
    }, 30_000);
    const done = () => {
      clearTimeout(timer);
      started.child.stdout!.off('data', check);
      started.child.stderr!.off('data', check);
      started.child.off('exit', exited);
    };
    started.child.stdout!.on('data', check);
    started.child.stderr!.on('data', check);
    started.child.once('exit', exited);
    check();
  });
}

/** Stops the whole process group: SIGTERM, then SIGKILL if any of it is left after 10 s. */
async function stopNpmStart(started: NpmStart): Promise<void> {
  const group = started.child.pid;
  if (group === undefined) return;
  const alive = () => {
    try {
      process.kill(-group, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(-group, 'SIGTERM');
  // No event says the whole group is gone (only the direct child's exit does): poll.
  try {
    await eventually(() => !alive(), { timeoutMs: 10_000, intervalMs: 20, what: 'the process group to exit' });
  } catch {
    if (alive()) process.kill(-group, 'SIGKILL');
  }
}

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sms-outbox-npm-start-'));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('npm start', () => {
  let started: NpmStart;
  let port: number;

  beforeAll(async () => {
    started = npmStart({ SMS_DB: join(dir, 'default.db') });
    // The last line of its banner: everything before it is printed too.
    await waitForOutput(started, /^profile codes: /m);
    port = Number(/^listening on 127\.0\.0\.1:(\d+)$/m.exec(started.output())?.[1]);
  }, 40_000);

  afterAll(async () => {
    if (started) await stopNpmStart(started);
  }, 20_000);

  it('listens on 127.0.0.1 only, with no warning', async () => {
    expect(started.output()).toMatch(/^listening on 127\.0\.0\.1:\d+$/m);
    expect(started.output()).toMatch(/^sms-outbox demo gateway on http:\/\/127\.0\.0\.1:\d+ /m);
    expect(started.output()).not.toContain('warning:');
    expect(port).toBeGreaterThan(0);
    expect(await tryConnect('127.0.0.1', port)).toBe('connected');
    const others = otherLocalAddresses();
    if (others.length === 0) {
      console.warn('npm start test: this machine has no non-loopback address, so only the reported address was checked');
    }
    for (const address of others) {
      expect({ address, result: await tryConnect(address, port) }).toEqual({ address, result: 'ECONNREFUSED' });
    }
  });

  it('prints the generated key as a line bash can export', async () => {
    const lines = started.output().split('\n').filter((line) => /^SMS_API_KEY=[^\s]+$/.test(line));
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    const env = { ...process.env };
    delete env.SMS_API_KEY;
    // The README's instruction, literally: `export ` and the line.
    const { stdout } = await run('bash', ['-c', `export ${line}\nprintf %s "$SMS_API_KEY"`], { env, timeout: 10_000 });
    expect(stdout).toBe(line.slice('SMS_API_KEY='.length));
    // And it is the demo's key: a lookup with it is answered (404: no such message), not 401.
    const lookup = `http://127.0.0.1:${port}/api/outbox/delivery-status/00000000-0000-7000-8000-000000000000`;
    expect((await fetch(lookup, { headers: { 'X-API-Key': stdout } })).status).toBe(404);
    expect((await fetch(lookup, { headers: { 'X-API-Key': `${stdout}x` } })).status).toBe(401);
  });
});

describe('npm start with HOST', () => {
  it('HOST=0.0.0.0 listens on every interface and warns that the key and the API are exposed', async () => {
    const demo = startDemo({ SMS_DB: join(dir, 'host.db'), SMS_API_KEY: 'host-test-key', HOST: '0.0.0.0' });
    try {
      const port = Number(new URL(await demo.origin).port);
      await waitForOutput({ child: demo.child, output: demo.output }, /^profile codes: /m);
      expect(demo.output()).toMatch(/^listening on 0\.0\.0\.0:\d+ \(every interface\)$/m);
      expect(demo.output()).toMatch(/^warning: HOST=0\.0\.0\.0 lets other machines reach this demo: the whole send API, and the page at \/, which hands out the API key\./m);
      const others = otherLocalAddresses().filter((address) => !address.includes(':'));
      if (others.length === 0) console.warn('npm start HOST test: no non-loopback IPv4 address to connect to');
      for (const address of others) {
        expect({ address, result: await tryConnect(address, port) }).toEqual({ address, result: 'connected' });
      }
    } finally {
      await stopDemo(demo.child);
    }
  }, 40_000);
});

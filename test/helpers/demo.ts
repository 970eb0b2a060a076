/**
 * The demo gateway (`npm start`) as a child process, for tests that use it as a person
 * would: on a free port, with SQLite in a place the test chose.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** A running demo. */
export interface RunningDemo {
  child: ChildProcess;
  /** Resolves with `http://127.0.0.1:<port>` once the demo listens. */
  origin: Promise<string>;
  /** Everything it printed so far. */
  output: () => string;
}

/**
 * Starts the demo on a free port with every message delivered (so end states are known),
 * plus `env` (SMS_DB and SMS_API_KEY at least).
 */
export function startDemo(env: Record<string, string>): RunningDemo {
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', 'demo/server.ts'], {
    cwd: REPO,
    env: { ...process.env, PORT: '0', SMS_SIM_OUTCOMES: 'delivered:1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const origin = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the demo did not print its address within 20 s:\n${output}`)), 20_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /demo gateway on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the demo exited (${code}) before listening:\n${output}`));
    });
  });
  return { child, origin, output: () => output };
}

/** Stops the demo with SIGTERM (SIGKILL after 10 s) and waits for it to exit. */
export async function stopDemo(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** A test file's demos and their databases ({@link demoFiles}). */
export interface DemoFiles {
  /** A file in the test file's own temp dir, for `SMS_DB`. */
  path(name: string): string;
  /** Demos the test file started: stopped after its tests. */
  running: RunningDemo[];
}

/** Makes a temp dir (named with `prefix`) before a test file's tests; after them, stops its demos and deletes the dir. */
export function demoFiles(prefix: string): DemoFiles {
  let dir: string | undefined;
  const running: RunningDemo[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    for (const demo of running) await stopDemo(demo.child);
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return { path: (name) => join(dir!, name), running };
}

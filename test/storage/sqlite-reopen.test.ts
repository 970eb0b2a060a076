import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const reopen = join(root, 'test', 'fixtures', 'sqlite-reopen.ts');
const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-reopen-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the reopen child to its end; resolves with how it ended and what it printed. */
function runReopen(path: string, rounds: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', reopen, path, String(rounds)], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`reopen child did not finish in time; stdout: ${out}; stderr: ${err}`));
    }, 60_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out, err });
    });
  });
}

describe('SqliteStorage reopened on one file', () => {
  it('survives a router closed and reopened many times with forced garbage collections', async () => {
    const path = join(dir, 'reopen.sqlite');
    const rounds = 8;
    const run = await runReopen(path, rounds);
    expect({ code: run.code, signal: run.signal }, run.err).toEqual({ code: 0, signal: null });
    expect(run.out.trim().split('\n').at(-1)).toBe(`round ${rounds}: ${rounds} messages`);

    const storage = new SqliteStorage({ path });
    await storage.ready();
    for (let round = 1; round <= rounds; round++) {
      expect(await storage.findByExternalId('reopen', `round-${round}`, 10), `round ${round}`).toHaveLength(1);
    }
    await storage.close();
  }, 90_000);
});

/**
 * Whether `version` is in `range`, for ranges of caret terms joined by `||` (the form the
 * peer ranges of package.json use); any other term fails the test rather than guess.
 */
function inCaretRange(version: string, range: string): boolean {
  const [major, minor, patch] = version.split('.').map(Number) as [number, number, number];
  return range.split('||').some((term) => {
    const caret = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(term.trim());
    if (caret === null) throw new Error(`not a caret range: "${term.trim()}"`);
    const [low1, low2, low3] = caret.slice(1).map(Number) as [number, number, number];
    return major === low1 && (minor > low2 || (minor === low2 && patch >= low3));
  });
}

describe('the better-sqlite3 peer range', () => {
  // better-sqlite3 12 aborts the process on Node 24 when statements of a closed database are
  // collected; 13 does not, and needs Node 22 or later. Both must install beside the package.
  const peer = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> })
    .peerDependencies['better-sqlite3']!;

  it('admits better-sqlite3 13 (Node 22 and 24) and 12 (Node 20)', () => {
    expect(inCaretRange('13.0.0', peer), peer).toBe(true);
    expect(inCaretRange('13.2.0', peer), peer).toBe(true);
    expect(inCaretRange('12.0.0', peer), peer).toBe(true);
    expect(inCaretRange('11.10.0', peer), peer).toBe(false);
  });
});

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const writer = join(root, 'test', 'fixtures', 'sqlite-writer.ts');
const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs the writer on `path`, kills it with SIGKILL once it has acknowledged `killAfter`
 * refs, and returns every ref it acknowledged (complete lines only).
 */
function runAndKill(path: string, killAfter: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    // `node --import tsx` rather than `npx tsx`: one process, so SIGKILL hits the writer itself.
    const child = spawn(process.execPath, ['--import', 'tsx', writer, path], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let killed = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`writer acknowledged too little in time; stderr: ${err}`));
    }, 20_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (!killed && out.split('\n').length - 1 >= killAfter) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') {
        reject(new Error(`writer exited on its own (code ${code}); stderr: ${err}`));
        return;
      }
      const lines = out.split('\n');
      lines.pop(); // a line cut off by the kill was never fully acknowledged
      resolve(lines.filter((line) => line !== ''));
    });
  });
}

describe('SqliteStorage crash safety', () => {
  it('keeps every acknowledged message when the process is killed with SIGKILL', async () => {
    for (let round = 0; round < 3; round++) {
      const path = join(dir, `crash-${round}.sqlite`);
      const killAfter = 50 + Math.floor(Math.random() * 1_500);
      const acknowledged = await runAndKill(path, killAfter);
      expect(acknowledged.length).toBeGreaterThanOrEqual(killAfter);

      const db = new Database(path);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const storage = new SqliteStorage({ database: db });
      const missing: string[] = [];
      for (const ref of acknowledged) {
        if ((await storage.getMessage('crash', ref)) === null) missing.push(ref);
      }
      expect(missing, `round ${round}: acknowledged but lost after kill -9`).toEqual([]);
      await storage.close();
      db.close();
    }
  });
});

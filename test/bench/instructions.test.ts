/**
 * `npm run bench -- --instructions` reads a server's instruction count through callgrind
 * (bench/instructions.ts). Checked here on a small Node child whose work we choose: three
 * times the work must count about three times the instructions, and nothing before
 * counting starts may be counted.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { callgrindPrefix, callgrindProblem, instructionsSoFar, startCounting } from '../../bench/instructions.js';

/**
 * Hashes n times 4 MiB per line it reads, answering `done` each time (`ready` first). The work
 * is OpenSSL's, native code whose instruction count does not depend on when V8's compiler runs.
 */
const WORKER = `
  const { createHash } = require('node:crypto');
  const block = Buffer.alloc(4 * 1024 * 1024, 1);
  const lines = require('node:readline').createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    const hash = createHash('sha256');
    for (let i = 0; i < Number(line); i++) hash.update(block);
    process.stdout.write('done ' + hash.digest('hex') + '\\n');
  });
  process.stdout.write('ready\\n');
`;

const problem = callgrindProblem();
if (problem !== null) console.log(`bench/instructions tests skipped: ${problem}`);

describe.skipIf(problem !== null)('callgrind instruction counts', () => {
  it('counts three times the work as about three times the instructions, and nothing before counting starts', async () => {
    const outDir = mkdtempSync(join(tmpdir(), 'sms-outbox-callgrind-'));
    const [command, ...args] = callgrindPrefix(outDir);
    const child = spawn(command!, [...args, process.execPath, '-e', WORKER], { stdio: ['pipe', 'pipe', 'ignore'] });
    try {
      const replies = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
      const next = async () => (await replies.next()).value as string;
      const work = async (units: number) => {
        child.stdin!.write(`${units}\n`);
        expect(await next()).toMatch(/^done /);
      };
      expect(await next()).toBe('ready');
      await work(3);
      startCounting(child.pid!);
      await work(1);
      const one = instructionsSoFar(child.pid!, outDir)!;
      await work(3);
      const three = instructionsSoFar(child.pid!, outDir)! - one;
      // Had the 3 units before counting been counted, `one` would hold 4 and the ratio be ~0.75.
      expect(one).toBeGreaterThan(1e7);
      expect(three / one).toBeGreaterThan(2.5);
      expect(three / one).toBeLessThan(3.5);
    } finally {
      child.kill('SIGKILL');
      rmSync(outDir, { recursive: true, force: true });
    }
  }, 60_000);
});

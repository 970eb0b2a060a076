/**
 * The suite runs on the machine's Node (`npm test`) and on Node 24 (`npm run test:node24`,
 * which sets SMS_OUTBOX_NODE=24 and puts Node 24 first on PATH). This checks that the run is on
 * the Node it says, in the test process and in the child processes the tests start (hosts and
 * the `--expose-gc` SQLite reopen child by `process.execPath`, npm scripts by `node` on PATH),
 * and that the better-sqlite3 it loads is a major that runs on that Node.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const own = Number(process.versions.node.split('.')[0]);
const expected = Number(process.env.SMS_OUTBOX_NODE ?? own);
const PRINT_MAJOR = "process.stdout.write(process.versions.node.split('.')[0])";

describe(`the suite's Node (${expected})`, () => {
  it('is the one the tests run on', () => {
    expect(own).toBe(expected);
  });

  it('is the one a child process started as the tests start hosts runs on', async () => {
    const { stdout } = await run(process.execPath, ['--expose-gc', '-e', PRINT_MAJOR], { timeout: 20_000 });
    expect(Number(stdout)).toBe(expected);
  });

  it('is the one `node` on PATH is, as npm scripts start it', async () => {
    const { stdout } = await run('node', ['-e', PRINT_MAJOR], { timeout: 20_000 });
    expect(Number(stdout)).toBe(expected);
  });

  it('loads a better-sqlite3 that runs on it (13 from Node 24 on: 12 aborts there)', () => {
    const { version } = createRequire(import.meta.url)('better-sqlite3/package.json') as { version: string };
    const major = Number(version.split('.')[0]);
    if (expected >= 24) expect(major, version).toBe(13);
    else if (expected < 22) expect(major, version).toBe(12);
    else expect([12, 13], version).toContain(major);
  });
});

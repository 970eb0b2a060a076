/**
 * The suite runs once on Express 5 (`npm test`) and once on Express 4 (`npm run
 * test:express4`, which sets SMS_OUTBOX_EXPRESS=4). This checks that the run is on the
 * Express it says, both in the test process and in the child processes the tests start,
 * so a swap that missed some of them cannot pass for an Express 4 run.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import express from 'express';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const expected = Number(process.env.SMS_OUTBOX_EXPRESS ?? '5');

describe(`the suite's Express (${expected})`, () => {
  it('is the one the tests import', () => {
    expect('query' in express ? 4 : 5).toBe(expected);
  });

  it('is the one a host started as a child process imports', async () => {
    const fixture = fileURLToPath(new URL('express-major.ts', import.meta.url));
    const { stdout } = await run(process.execPath, ['--import', 'tsx', fixture], { timeout: 20_000 });
    expect(Number(stdout)).toBe(expected);
  });
});

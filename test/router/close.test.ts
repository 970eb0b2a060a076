import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const fixture = fileURLToPath(new URL('../fixtures/close-exits.ts', import.meta.url));

describe('close()', () => {
  it('lets the process exit by itself once the router is closed', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', fixture], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exit = await new Promise<number | null | 'timeout'>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve('timeout');
      }, 20_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
    expect(output).toBe('status 200\ndelivered\nclosed\n');
    expect(exit).toBe(0);
  });
});

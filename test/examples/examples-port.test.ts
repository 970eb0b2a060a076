/**
 * Each example, run on its own as its header says, listens on `PORT` when it is set (as
 * the demo does), so two can run side by side and a taken port is no dead end.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** A port free now: taken from the system, then let go. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Runs `examples/<name>.ts` with PORT=`port` until it prints an address; resolves with its output. */
function firstAddress(name: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `examples/${name}.ts`], {
      cwd: REPO,
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const timer = setTimeout(() => finish(new Error(`${name} printed no address within 20 s:\n${output}`)), 20_000);
    const finish = (error?: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      if (error) reject(error);
      else resolve(output);
    };
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (/http:\/\/127\.0\.0\.1:\d+/.test(output)) finish();
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => finish(new Error(`${name} exited (${code}) before printing an address:\n${output}`)));
  });
}

describe('the examples on PORT', () => {
  for (const name of ['billing', 'custom-storage', 'dlr-receiver', 'host-with-key-database', 'mount-under-prefix']) {
    it(`${name} listens on the PORT it is given`, async () => {
      const port = await freePort();
      const output = await firstAddress(name, port);
      expect(output).toContain(`http://127.0.0.1:${port}`);
    }, 30_000);
  }
});

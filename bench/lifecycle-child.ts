/**
 * The process `bench/lifecycle.ts` counts: a router of the checkout named by
 * BENCH_CHECKOUT (its `src/`, through tsx) on memory or SQLite storage with the simulator
 * carrier, and a keep-alive HTTP client in the same process. It sends WARMUP one-message
 * quick sends and waits until each has ended, prints `ready`, waits for a line on stdin
 * (the parent has started counting), does the same for MESSAGES more, and prints `done`.
 * Every message is carried to its end, so the work counted is whole lifecycles: the
 * request, the store, the worker's submission and the receipt, not a share of them that
 * depends on how far the worker lagged when counting stopped.
 */
import { once } from 'node:events';
import http from 'node:http';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import express from 'express';

const checkout = process.env.BENCH_CHECKOUT ?? process.cwd();
const storageName = process.env.BENCH_STORAGE ?? 'memory';
const warmup = Number(process.env.BENCH_WARMUP ?? 2000);
const messages = Number(process.env.BENCH_MESSAGES ?? 1000);
const dbPath = join(process.env.BENCH_SCRATCH ?? '/tmp', `lifecycle-${process.pid}.db`);

// Loaded by path, so that one harness drives the router of any commit checked out.
const lib = await import(pathToFileURL(join(checkout, 'src', 'index.ts')).href);
const storage =
  storageName === 'sqlite'
    ? new (await import(pathToFileURL(join(checkout, 'src', 'sqlite.ts')).href)).SqliteStorage({ path: dbPath })
    : new lib.MemoryStorage();
const sms = lib.createSmsRouter({
  verifyKey: lib.staticKeys([{ key: 'lifecycle-key-0123456789', id: 'bench', profiles: ['12345'] }]),
  storage,
  delivery: new lib.SimulatorDelivery({ latencyMs: [1, 2], seed: 1 }),
  rateLimit: false,
  ...(process.env.BENCH_TRACING === 'off' ? { tracing: false } : {}),
});
// The terminal states of every version measured, named here rather than imported: an older
// commit may not export them.
const TERMINAL = new Set(['delivered', 'failed', 'expired', 'rejected', 'undeliverable', 'cancelled']);
let ended = 0;
sms.on('message.status', ({ message }: { message: { state: string } }) => {
  if (TERMINAL.has(message.state)) ended++;
});
sms.on('error', ({ error }: { error: unknown }) => process.stderr.write(`sms-outbox error: ${String(error)}\n`));
await sms.ready?.();
const app = express();
app.use(sms);
const server = app.listen(0, '127.0.0.1');
await once(server, 'listening');
const { port } = server.address() as { port: number };
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

function send(i: number): Promise<void> {
  const body = JSON.stringify({
    profile_code: '12345',
    messages: [{ recipient: `2547${10_000_000 + (i % 5000)}`, message: 'Your code is 4821. Pay KES 1,500 to M-PESA now. Asante!', external_id: `m-${i}` }],
  });
  const headers = { 'content-type': 'application/json', 'x-api-key': 'lifecycle-key-0123456789', 'content-length': Buffer.byteLength(body) };
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/api/outbox/create', method: 'POST', agent, headers }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends `count` messages from number `from`, 8 requests at a time, and waits until all have ended. */
async function lifecycles(from: number, count: number): Promise<void> {
  const target = ended + count;
  for (let i = from; i < from + count; i += 8) await Promise.all(Array.from({ length: Math.min(8, from + count - i) }, (_, j) => send(i + j)));
  const deadline = Date.now() + 300_000;
  while (ended < target) {
    if (Date.now() > deadline) throw new Error(`${target - ended} messages did not end within 5 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

await lifecycles(0, warmup);
process.stdout.write('ready\n');
const lines = createInterface({ input: process.stdin });
await once(lines, 'line');
await lifecycles(warmup, messages);
process.stdout.write('done\n');
await once(lines, 'line');
agent.destroy();
server.close();
await sms.close?.();
for (const suffix of ['', '-wal', '-shm']) rmSync(`${dbPath}${suffix}`, { force: true });
process.exit(0);

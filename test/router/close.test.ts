import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { SimulatorDelivery } from '../../src/index.js';
import { isTerminal } from '../../src/lifecycle/states.js';
import { SqliteStorage } from '../../src/sqlite.js';
import { cleanupAfterEach } from '../dlr/helpers.js';
import { eventually } from '../helpers/poll.js';
import { createGateway, KEY } from '../helpers/gateway.js';

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

describe('a graceful restart', () => {
  const { cleanups, receiver } = cleanupAfterEach();

  it('sends the delivery reports the closed router held at once, not after their lease', async () => {
    // The receiver keeps the first report 2 s (the 20 messages end within a tenth of that);
    // one report at a time goes to it, so the other 19 wait in the closing router's queue,
    // leased to it for dlr.leaseMs (35 s).
    const r = await receiver((n) => ({ status: 200, delayMs: n === 0 ? 2_000 : 0 }));
    const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-restart-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'sms.db');
    const dlr = { allowPrivateAddresses: ['127.0.0.0/8'], perHostConcurrency: 1 };
    const first = createGateway({ storage: new SqliteStorage({ path }), dlr });
    cleanups.push(() => first.sms.close());
    let ended = 0;
    first.sms.on('message.status', (event) => {
      if (event.message.state === 'delivered') ended++;
    });
    const messages = Array.from({ length: 20 }, (_, i) => ({ recipient: '254712345678', message: `report ${i}` }));
    const res = await request(first.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', dlr_callback_url: `${r.origin}/dlr`, messages });
    expect(res.status).toBe(200);
    await eventually(() => ended === 20 && r.requests.length === 1, { timeoutMs: 10_000, what: 'every message delivered, one report sent' });
    await first.sms.close();
    expect(r.requests).toHaveLength(1);

    const restarted = createGateway({ storage: new SqliteStorage({ path }), dlr });
    cleanups.push(() => restarted.sms.close());
    // Well inside the 35 s their lease would have held them.
    await eventually(() => r.requests.length === 20, { timeoutMs: 10_000, what: 'the 19 reports the first router held' });
    const refs = (res.body as { message_ref: string }[]).map((item) => item.message_ref);
    expect(new Set(r.requests.map((req) => JSON.parse(req.body).data.message_ref as string))).toEqual(new Set(refs));
  });
});

describe('a graceful close with the simulator', () => {
  const { cleanups, receiver } = cleanupAfterEach();

  it('strands no message whose receipt the simulated carrier still held: each ends, with its report', async () => {
    const r = await receiver();
    const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-close-sim-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'sms.db');
    const dlr = { allowPrivateAddresses: ['127.0.0.0/8'] };
    // Receipts 20 to 40 s after each submit: every part the first router submits is still
    // waiting for its receipt when it closes, and no receipt deadline can end it in this
    // test. 500 submits a second: some messages are still queued at the close.
    const slow = new SimulatorDelivery({ seed: 3, latencyMs: [20_000, 40_000], tps: 500 });
    const first = createGateway({ storage: new SqliteStorage({ path }), delivery: slow, dlr });
    cleanups.push(() => first.sms.close());
    let submitted = 0;
    first.sms.on('message.submitted', () => submitted++);
    const refs: string[] = [];
    for (let batch = 0; batch < 4; batch++) {
      const messages = Array.from({ length: 250 }, (_, i) => ({ recipient: '254712345678', message: `in flight ${batch}/${i}` }));
      const res = await request(first.app)
        .post('/api/outbox/create')
        .set('X-API-Key', KEY)
        .send({ profile_code: '12345', dlr_callback_url: `${r.origin}/dlr`, messages });
      expect(res.status).toBe(200);
      refs.push(...(res.body as { message_ref: string }[]).map((item) => item.message_ref));
    }
    // Closed mid-stream: many submitted and waiting for receipts, the rest still queued.
    await eventually(() => submitted >= 300, { timeoutMs: 10_000, what: '300 messages submitted' });
    await first.sms.close();
    expect(slow.pendingReceipts).toBe(0);

    const storage = new SqliteStorage({ path });
    const restarted = createGateway({ storage, dlr });
    cleanups.push(() => restarted.sms.close());
    const states = async () => {
      const counts = new Map<string, number>();
      for (const ref of refs) {
        const state = (await storage.getMessage('acme', ref))?.state ?? 'missing';
        counts.set(state, (counts.get(state) ?? 0) + 1);
      }
      return counts;
    };
    await eventually(states, {
      timeoutMs: 15_000,
      until: (counts) => [...counts.keys()].every((state) => isTerminal(state as never)),
      what: 'every message to end',
    });
    // They ended by their receipts, not by a timeout.
    expect(await states()).toEqual(new Map([['delivered', refs.length]]));
    await eventually(() => new Set(r.requests.map((req) => JSON.parse(req.body).data.message_ref as string)).size === refs.length, {
      timeoutMs: 15_000,
      what: 'a report for every message',
    });
  });
});

/**
 * The simulated carrier lives in the gateway's process, so a kill -9 takes the receipts it
 * still held with it: no carrier will ever send them. A real carrier would, after the
 * reconnect. The simulator tells the router how long a receipt of its can take
 * (`receiptDeadlineMs`), and a restarted gateway ends each message the dead one's
 * simulator had taken (`expired`, reason `unknown`) once that has passed, with its delivery
 * report, instead of leaving it `submitted` for `worker.receiptTimeoutMs` (48 h).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { isTerminal } from '../../src/lifecycle/states.js';
import { startDlrReceiver, type DlrReceiver } from '../fixtures/dlr-receiver.js';
import { quickBody, send, statusesOnceEnded, type AckedMessage } from '../e2e/client.js';
import { startHost, type HostConfig, type HostProcess } from '../e2e/host-process.js';
import { eventually } from '../helpers/poll.js';

const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-simulator-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hosts: HostProcess[] = [];
let receiver: DlrReceiver | undefined;
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.stop();
  await receiver?.close();
  receiver = undefined;
});

describe('kill -9 of a gateway whose carrier is the simulator', () => {
  it('ends every message after the restart, within the simulator\'s receipt deadline, each with its report', { timeout: 60_000 }, async () => {
    receiver = await startDlrReceiver();
    const config: HostConfig = {
      storage: { kind: 'sqlite', path: join(dir, 'outbox.sqlite') },
      // Receipts 3 to 5 s after each submit: none has come back by the kill. The deadline
      // is 6 s; the worker's receiptTimeoutMs stays at its 48 h default.
      simulator: { latencyMs: [3_000, 5_000], receiptDeadlineMs: 6_000 },
    };
    const first = await startHost({ ...config, instanceId: 'sim-crash-1' });
    hosts.push(first);
    const acked: AckedMessage[] = [];
    for (let i = 0; i < 4; i++) {
      const externalId = `sim-crash-${i}`;
      acked.push(...(await send(first.base, quickBody(50, externalId, receiver.url, ['Hello']), externalId, true)));
    }
    await eventually(() => first.submits.length >= 100, { timeoutMs: 10_000, what: '100 parts accepted by the simulator' });
    await first.kill();
    const taken = new Set(first.submits.map((s) => s.ref));

    const restarted = await startHost({ ...config, instanceId: 'sim-crash-2' });
    hosts.push(restarted);
    const statuses = await statusesOnceEnded(restarted.base, acked, 30_000);
    const open = acked.filter((m) => !isTerminal(statuses.get(m.ref)?.status ?? 'queued'));
    expect(open.map((m) => `${m.ref}: ${statuses.get(m.ref)?.status}`).slice(0, 10), `${open.length} of ${acked.length} still open`).toEqual([]);
    // The messages whose receipts died with the first gateway end by the deadline.
    const endedUnknown = acked.filter((m) => statuses.get(m.ref)?.status === 'expired' && statuses.get(m.ref)?.status_reason === 'unknown');
    expect(endedUnknown.length).toBeGreaterThan(0);
    for (const m of endedUnknown) expect(taken.has(m.ref)).toBe(true);
    await receiver.waitFor(acked.map((m) => m.ref), 20_000);
  });
});

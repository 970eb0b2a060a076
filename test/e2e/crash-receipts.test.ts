/**
 * Carrier receipts across kill -9, with a real SMPP link: a host process using
 * `SmppDelivery` takes concurrent sends against the test SMSC in auto receipt mode (a
 * DELIVRD receipt right after each submit_sm_resp, so receipts routinely overtake the
 * recording of their own submission), and is killed with SIGKILL several times; each time
 * a new host starts on the same storage and the same SMSC, which outlives the kills and
 * redelivers what was refused or left unanswered. After the last restart every message
 * acknowledged with 200 must end `delivered`: a receipt the carrier was told was stored
 * must be stored. The receipt timeout stays at its 48 h default, so it cannot end a
 * message whose receipt was lost; such a message stays `submitted` and fails the test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isTerminal } from '../../src/lifecycle/states.js';
import { startSmsc, type SmscEvent, type SmscHandle } from '../fixtures/smsc.js';
import { runSenders, statusesOnceEnded, type AckedMessage } from './client.js';
import { startHost, type HostProcess, type HostStorage } from './host-process.js';
import { hostStatementsSettled, makePool, postgresUnavailable, schemasOfThisFile } from './postgres-service.js';

/** Hosts killed before the one that must finish the work. */
const KILLS = 4;
/** Each load phase stops (and its host is killed) at the latest after this long, ms. */
const LOAD_MS = 4_000;
/** How long the last host has to end every acknowledged message, ms. */
const DRAIN_MS = 25_000;

const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-e2e-crash-receipts-'));
const pgUnavailable = await postgresUnavailable('PostgreSQL receipt crash e2e test');
const newSchema = schemasOfThisFile(pgUnavailable);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function runReceiptCrashLoop(name: string, storage: HostStorage, settle?: (instanceId: string) => Promise<void>): Promise<void> {
  const started = Date.now();
  const smsc: SmscHandle = await startSmsc({ password: 'secret', maxDeliveries: 30 });
  const hosts: HostProcess[] = [];
  try {
    await smsc.send({ cmd: 'set', receiptMode: 'auto' });
    const acked = new Map<string, AckedMessage>();
    const perCycle: number[] = [];
    for (let cycle = 1; cycle <= KILLS; cycle++) {
      const instanceId = `crash-receipts-${name}-${cycle}`;
      const host = await startHost({ storage, instanceId, smsc: { port: smsc.port } });
      hosts.push(host);
      // Killed at a random point of a steady stream: submits and receipts are in flight.
      const killAfter = 150 + Math.floor(Math.random() * 350);
      let killing: Promise<void> | null = null;
      const load = await runSenders({
        base: host.base,
        clients: 8,
        callbackUrl: 'http://127.0.0.1:9/unused',
        callbackShare: 0,
        deadlineMs: LOAD_MS,
        onAck: (total) => {
          if (total >= killAfter) killing ??= host.kill();
        },
      }).done;
      await (killing ?? host.kill());
      expect(load.unexpected.map((e) => e.message), `non-200 answers under load (cycle ${cycle})`).toEqual([]);
      expect(load.acked.length, `no acks in cycle ${cycle}; host stderr: ${host.stderr()}`).toBeGreaterThan(0);
      for (const message of load.acked) acked.set(message.ref, message);
      perCycle.push(load.acked.length);
      await settle?.(instanceId);
    }

    const last = await startHost({ storage, instanceId: `crash-receipts-${name}-last`, smsc: { port: smsc.port } });
    hosts.push(last);
    const statuses = await statusesOnceEnded(last.base, [...acked.values()], DRAIN_MS);

    const counts = new Map<string, number>();
    const problems: string[] = [];
    for (const message of acked.values()) {
      const status = statuses.get(message.ref)?.status ?? 'not found';
      counts.set(status, (counts.get(status) ?? 0) + 1);
      if (status !== 'delivered') problems.push(`${message.ref}: ${status} (${statuses.get(message.ref)?.status_reason ?? '-'})`);
    }
    const redelivered = smsc.events.filter((e): e is Extract<SmscEvent, { event: 'redeliver' }> => e.event === 'redeliver');
    const gaveUp = smsc.events.filter((e) => e.event === 'redeliver_gave_up').length;
    const stuck = [...acked.values()].filter((m) => !isTerminal(statuses.get(m.ref)?.status ?? 'queued')).length;
    console.log(
      `[crash-receipts ${name}] ${KILLS} kills, acked per host ${perCycle.join('/')} = ${acked.size} messages; ` +
        `after the last restart: ${[...counts].map(([s, n]) => `${n} ${s}`).join(', ')}; ${stuck} stuck; ` +
        `SMSC redeliveries: ${redelivered.filter((e) => e.reason === 'unanswered').length} unanswered at a kill, ` +
        `${redelivered.filter((e) => e.reason === 'refused').length} refused; ${gaveUp} given up; ` +
        `${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    expect(problems.slice(0, 20), `${problems.length} of ${acked.size} acknowledged messages did not end delivered`).toEqual([]);
    expect(last.errors.filter((e) => e.source === 'request' || e.source === 'storage')).toEqual([]);
  } finally {
    for (const host of hosts) await host.stop();
    await smsc.stop();
  }
}

describe('carrier receipts across kill -9, SmppDelivery to a real SMSC with immediate receipts', () => {
  it('SQLite: every acknowledged message ends delivered, none stuck', { timeout: 90_000 }, async () => {
    await runReceiptCrashLoop('sqlite', { kind: 'sqlite', path: join(dir, 'outbox.sqlite') });
  });

  it.skipIf(pgUnavailable !== null)('PostgreSQL: every acknowledged message ends delivered, none stuck', { timeout: 90_000 }, async () => {
    const schema = newSchema('e2e_crash_receipts');
    await runReceiptCrashLoop('postgres', { kind: 'postgres', schema }, hostStatementsSettled);
  });
});

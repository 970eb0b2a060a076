/**
 * The crash scenario of the durable storages, through the public router: a host takes
 * concurrent sends, is killed with SIGKILL at a random moment, and a new host on the same
 * storage must finish the work. Shared by the SQLite and PostgreSQL e2e tests.
 *
 * The simulated carrier lives in the killed process, so a part it accepted whose receipt
 * had not come back by the kill never gets one (a real carrier would deliver the receipt
 * after the reconnect; the simulator cannot). Such messages are read from storage between
 * the kill and the restart and counted as "stranded"; the new host runs with a short
 * `worker.receiptTimeoutMs`, so they too end (`expired`, reason `unknown`) and report it, as
 * every other acknowledged message must.
 */
import { expect } from 'vitest';
import { isTerminal } from '../../src/lifecycle/states.js';
import type { MessageRecord, Storage } from '../../src/storage/contract.js';
import { startDlrReceiver } from '../fixtures/dlr-receiver.js';
import { runSenders, statusesOnceEnded, type AckedMessage } from './client.js';
import { HOST_PRINCIPAL, startHost, type HostStorage } from './host-process.js';

/** One storage under the crash test. */
export interface CrashScenario {
  /** Printed in the summary. */
  name: string;
  /** What the hosts run on. */
  storage: HostStorage;
  /** Opens the same storage in the test process, to read it between the kill and the restart. */
  openStorage(): Promise<{ storage: Storage; close(): Promise<void> }>;
  /**
   * Waits until nothing the killed host (by instance id) had already sent can still change
   * the storage. A database server finishes, and commits, a statement whose client died
   * while it ran: read before that, a message would look queued and then end without the
   * new host's help. SQLite needs no wait: its writes ran in the dead process itself.
   */
  settle?(instanceId: string): Promise<void>;
}

/** How a message stood when the first host died. */
type AtKill = 'terminal' | 'scheduled' | 'queued' | 'submitted';

/** True when a part was accepted by the dead host's carrier and its receipt never came. */
function stranded(message: MessageRecord): boolean {
  return !isTerminal(message.state) && message.parts.some((part) => part.carrierId !== null && part.outcome === null);
}

/**
 * Runs the scenario and asserts: every acknowledged message is stored after the kill; after
 * the restart every one reaches a terminal state (those queued at the kill are submitted by
 * the new host; stranded ones end by the receipt timeout), and every one with a callback URL
 * got a delivery report carrying its final status. Duplicated reports are allowed and counted.
 */
export async function runCrashScenario(scenario: CrashScenario): Promise<void> {
  const started = Date.now();
  const receiver = await startDlrReceiver({ failureRate: 0.1 });
  const hosts: { stop(): Promise<void> }[] = [];
  try {
    // 1. Load, then SIGKILL at a random moment: after a random number of acknowledged messages.
    const firstId = 'crash-gen-1';
    const first = await startHost({ storage: scenario.storage, instanceId: firstId, simulator: SIMULATOR });
    hosts.push(first);
    const killAfter = 100 + Math.floor(Math.random() * 500);
    let killing: Promise<void> | null = null;
    const senders = runSenders({
      base: first.base,
      clients: 8,
      callbackUrl: receiver.url,
      callbackShare: 0.8,
      deadlineMs: 10_000,
      onAck: (total) => {
        if (total >= killAfter) killing ??= first.kill();
      },
    });
    const load = await senders.done;
    // Bounded: if the target was not reached in time, the kill comes at the deadline.
    await (killing ?? first.kill());
    const killedAt = Date.now();
    const phases: string[] = [`load ${secondsSince(started)}`];
    expect(load.unexpected.map((e) => e.message), 'non-200 answers under load').toEqual([]);
    expect(load.acked.length, `too few acks before the kill; host stderr: ${first.stderr()}`).toBeGreaterThan(0);
    const acked = new Map<string, AckedMessage>(load.acked.map((m) => [m.ref, m]));
    await scenario.settle?.(firstId);

    // 2. Between kill and restart: every acknowledged message is in storage.
    const atKill = new Map<string, AtKill>();
    const strandedRefs = new Set<string>();
    const unsubmittedParts = new Map<string, number[]>();
    const missing: string[] = [];
    const opened = await scenario.openStorage();
    try {
      for (const ref of acked.keys()) {
        const message = await opened.storage.getMessage(HOST_PRINCIPAL, ref);
        if (message === null) {
          missing.push(ref);
          continue;
        }
        atKill.set(ref, isTerminal(message.state) ? 'terminal' : message.state);
        if (stranded(message)) strandedRefs.add(ref);
        if (message.state === 'queued') {
          unsubmittedParts.set(ref, message.parts.filter((p) => p.carrierId === null).map((p) => p.index));
        }
      }
    } finally {
      await opened.close();
    }
    expect(missing, 'acknowledged with 200 but lost after kill -9').toEqual([]);
    phases.push(`snapshot ${secondsSince(started)}`);

    // 3. Restart on the same storage; the new host finishes what the first left.
    const second = await startHost({
      storage: scenario.storage,
      instanceId: 'crash-gen-2',
      simulator: SIMULATOR,
      worker: { receiptTimeoutMs: STRANDED_TIMEOUT_MS },
    });
    hosts.push(second);
    phases.push(`restart ${secondsSince(started)}`);
    const mustEnd = [...acked.values()];
    // A timeout here is not fatal: the checks below name each message that lacks its report.
    await receiver
      .waitFor(
        mustEnd.filter((m) => m.hasCallback).map((m) => m.ref),
        30_000,
      )
      .catch((error: unknown) => console.warn(`[crash ${scenario.name}] ${String(error)}`));
    phases.push(`reports ${secondsSince(started)}`);
    const statuses = await statusesOnceEnded(second.base, [...acked.values()], 15_000);
    phases.push(`ended ${secondsSince(started)}`);

    // 4. What the public router says now.
    const problems: string[] = [];
    let strandedExpired = 0;
    for (const message of acked.values()) {
      const status = statuses.get(message.ref);
      if (status === undefined) {
        problems.push(`${message.ref}: not found through the status endpoint`);
        continue;
      }
      if (strandedRefs.has(message.ref) && status.status === 'expired') strandedExpired++;
      if (!isTerminal(status.status)) {
        problems.push(`${message.ref}: ${status.status} (was ${atKill.get(message.ref)} at the kill), never ended`);
      }
      const reports = receiver.accepted.get(message.ref) ?? [];
      if (isTerminal(status.status) && message.hasCallback && reports.length === 0) {
        problems.push(`${message.ref}: ${status.status} but no delivery report`);
      }
      if (!message.hasCallback && reports.length > 0) problems.push(`${message.ref}: a report without a callback URL`);
      for (const report of reports) {
        if (report.data.status !== status.status) {
          problems.push(`${message.ref}: reported ${report.data.status}, status says ${status.status}`);
        }
        if (report.uid !== reports[0]!.uid) problems.push(`${message.ref}: reports with different uids`);
      }
    }
    // Queued at the kill: the parts the first host had not recorded went to the carrier
    // from the new host (a message delivered needs every part's receipt, so every part).
    const submittedBySecond = new Set(second.submits.map((s) => `${s.ref}#${s.index}`));
    let resubmitted = 0;
    for (const [ref, parts] of unsubmittedParts) {
      if (strandedRefs.has(ref) || statuses.get(ref)?.status !== 'delivered') continue;
      for (const index of parts) {
        if (submittedBySecond.has(`${ref}#${index}`)) resubmitted++;
        else problems.push(`${ref}: part ${index} queued at the kill, delivered, but not submitted after the restart`);
      }
    }
    expect(problems.slice(0, 20), `${problems.length} problems`).toEqual([]);
    expect(second.errors.filter((e) => e.source === 'request' || e.source === 'storage')).toEqual([]);

    const count = (state: AtKill) => [...atKill.values()].filter((s) => s === state).length;
    // A duplicate whose copies both came before the kill was not caused by the crash.
    const duplicatesBeforeKill = [...receiver.arrivals.values()].filter((times) => times.filter((t) => t < killedAt).length > 1).length;
    const unackedReports = [...receiver.accepted.keys()].filter((ref) => !acked.has(ref)).length;
    console.log(
      `[crash ${scenario.name}] killed after ${load.acked.length} acked messages (target ${killAfter}); at the kill: ` +
        `${count('terminal')} terminal, ${count('queued')} queued, ${count('submitted')} submitted; ` +
        `${strandedRefs.size} stranded (carrier receipt lost with the process; ${strandedExpired} ended by the receipt timeout); ` +
        `carrier accepted ${first.submits.length} parts before the kill, ${second.submits.length} after ` +
        `(${resubmitted} of them queued at the kill); ` +
        `delivery reports: ${receiver.duplicates()} duplicates (${duplicatesBeforeKill} refs with both copies before the kill), ${receiver.refused} answered 503, ` +
        `${unackedReports} for messages stored but never acknowledged; ` +
        `errors: gen1 ${first.errors.length}, gen2 ${second.errors.length}; phases (s): ${phases.join(', ')}`,
    );
  } finally {
    for (const host of hosts) await host.stop();
    await receiver.close();
  }
}

function secondsSince(start: number): string {
  return ((Date.now() - start) / 1000).toFixed(1);
}

/** How long the restarted host waits for receipts the dead host's carrier took with it. */
const STRANDED_TIMEOUT_MS = 3_000;

/** A carrier with every kind of ending, refusals and throttling, and some duplicate receipts. */
const SIMULATOR = {
  outcomes: { delivered: 80, absent_subscriber: 4, expired: 3, rejected: 2, sender_name_blacklisted: 2, throttled: 9 },
  duplicateReceipts: 0.05,
};


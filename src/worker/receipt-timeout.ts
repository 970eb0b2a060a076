/**
 * Ends messages whose carrier never sent a receipt: a `submitted` message that has heard
 * nothing for `receiptTimeoutMs` becomes `expired` (reason `unknown`) and its caller gets
 * a delivery report, instead of waiting forever. Real SMSCs give up on a message after its
 * validity period (commonly 48 hours), so a receipt later than that is not coming.
 */
import type { DeliveryAdapter } from '../delivery/contract.js';
import type { Emit } from '../observe/events.js';
import { outcome } from '../lifecycle/states.js';
import type { Storage, Transition } from '../storage/contract.js';
import { drainInBatches, Periodic } from './periodic.js';

/**
 * Messages ended per storage call. Each is a synchronous stretch on memory and SQLite (its
 * storage work, then its transitions), a few ms per 100 on a loaded machine: requests wait
 * no longer than one batch, as the sweep yields between them (periodic.ts).
 */
const BATCH = 100;

/** `172800000` -> `48 h`, `1500` -> `2 s`, `300` -> `300 ms`. */
function duration(ms: number): string {
  if (ms >= 3_600_000) return `${Math.round(ms / 3_600_000)} h`;
  if (ms >= 1_000) return `${Math.round(ms / 1_000)} s`;
  return `${ms} ms`;
}

/** Returns the periodic expiry of overdue `submitted` messages. */
export function receiptTimeoutSweep(
  storage: Storage,
  receiptTimeoutMs: number,
  now: () => number,
  emit: Emit,
  onTransition: (transition: Transition) => void,
): Periodic {
  const noReceipt = outcome('expired', 'unknown', `No delivery receipt from the carrier within ${duration(receiptTimeoutMs)}`);
  // Checked a few times per timeout, but at least once a minute.
  const intervalMs = Math.min(60_000, Math.max(100, Math.floor(receiptTimeoutMs / 4)));
  return new Periodic(
    intervalMs,
    () =>
      drainInBatches(BATCH, async () => {
        const ended = await storage.expireOverdue(now() - receiptTimeoutMs, BATCH, noReceipt, now());
        for (const transition of ended) onTransition(transition);
        return ended.length;
      }),
    (error) => emit('error', { error, source: 'worker' }),
  );
}

/**
 * How long a `submitted` message waits for its receipts: `worker.receiptTimeoutMs`, or the
 * adapter's `receiptDeadlineMs` when that is shorter (an adapter whose receipts die with
 * the process, as the simulator's do, would otherwise leave a crash's messages waiting 48 h).
 */
export function receiptTimeoutFor(receiptTimeoutMs: number, delivery: Pick<DeliveryAdapter, 'receiptDeadlineMs'>): number {
  const deadline = delivery.receiptDeadlineMs;
  return typeof deadline === 'number' && deadline > 0 ? Math.min(receiptTimeoutMs, deadline) : receiptTimeoutMs;
}

/**
 * The time-aware sweep (docs/lifecycle.md#scheduled-sends-validity-and-cancel): queues the
 * scheduled messages that have come due, each tagged in the fair order of that moment, and
 * ends the queued ones whose validity period ended before they could go (`expired`,
 * `validity_period_elapsed`), with their reports. A claim never hands out a stale message
 * anyway; the sweep is what ends it and tells its sender.
 */
import type { Emit } from '../observe/events.js';
import type { Storage, Transition } from '../storage/contract.js';
import { drainInBatches, Periodic } from './periodic.js';

/**
 * Messages moved per storage call. Each is a synchronous stretch on memory and SQLite (its
 * storage work, then its transitions), a few ms per 100 on a loaded machine: requests wait
 * no longer than one batch, as the sweep yields between them (periodic.ts).
 */
const BATCH = 100;

/** What the sweep needs. */
export interface TimeSweepDeps {
  storage: Storage;
  /** How often it runs, ms: the worker's poll interval, so a due message waits no longer than an idle poll. */
  intervalMs: number;
  now: () => number;
  emit: Emit;
  onTransition: (transition: Transition) => void;
  /** Called when messages were queued: the worker claims them at once. */
  wake: () => void;
}

/** Returns the periodic sweep, or `null` when the storage keeps no times. */
export function timeSweep(deps: TimeSweepDeps): Periodic | null {
  const { storage, now, onTransition } = deps;
  if (storage.promoteScheduled === undefined || storage.expireUnsent === undefined) return null;
  const promote = storage.promoteScheduled.bind(storage);
  const expire = storage.expireUnsent.bind(storage);
  const step = (run: (at: number, limit: number) => Promise<Transition[]>) => async (): Promise<number> => {
    const moved = await run(now(), BATCH);
    for (const transition of moved) onTransition(transition);
    if (moved.some((transition) => transition.message.state === 'queued')) deps.wake();
    return moved.length;
  };
  return new Periodic(
    deps.intervalMs,
    async () => {
      await drainInBatches(BATCH, step(promote));
      await drainInBatches(BATCH, step(expire));
    },
    (error) => deps.emit('error', { error, source: 'worker' }),
  );
}

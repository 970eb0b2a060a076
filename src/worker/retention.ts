/**
 * Retention: purges terminal messages older than the configured age, in bounded batches,
 * so storage does not grow without end.
 */
import type { Emit } from '../observe/events.js';
import { drainInBatches, Periodic } from './periodic.js';
import type { Storage } from '../storage/contract.js';

/** Returns the periodic purge of `storage` (start it, close it with the router). */
export function retentionSweep(storage: Storage, config: Required<RetentionOptions>, now: () => number, emit: Emit): Periodic {
  return new Periodic(
    config.intervalMs,
    () => drainInBatches(config.batchSize, () => storage.purge(now() - config.maxAgeMs, config.batchSize)),
    (error) => emit('error', { error, source: 'storage' }),
  );
}

/** How terminal messages are purged so storage does not grow without end. */
export interface RetentionOptions {
  /** Terminal messages last changed longer ago than this are deleted, ms. Default 30 days. */
  maxAgeMs?: number;
  /** How often to purge, ms. Default 1 hour. */
  intervalMs?: number;
  /** Most messages deleted per storage call (a purge loops until done). Default 1000. */
  batchSize?: number;
}

/** The retention defaults. */
export const RETENTION_DEFAULTS: Required<RetentionOptions> = {
  maxAgeMs: 30 * 24 * 3600_000,
  intervalMs: 3600_000,
  batchSize: 1000,
};

/**
 * Retention: purges terminal messages older than the configured age, in bounded batches,
 * so storage does not grow without end.
 */
import type { Emit } from '../events.js';
import type { RetentionOptions } from '../options.js';
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

/**
 * Samples the queue for the `queue.depth` event (and so the queue gauges of the `metrics`
 * option): a count every few seconds, taken only while someone listens, since with a large
 * backlog a count reads an index range of it.
 */
import type { Emit } from '../observe/events.js';
import type { Storage } from '../storage/contract.js';
import { Periodic } from './periodic.js';

/** How often the queue is sampled, ms. */
export const QUEUE_SAMPLE_MS = 5_000;

/** Returns the periodic sample of `storage`'s queue, or `null` when it cannot count it. */
export function queueSampler(storage: Storage, listening: () => boolean, now: () => number, emit: Emit): Periodic | null {
  const count = storage.countQueued?.bind(storage);
  if (count === undefined) return null;
  return new Periodic(
    QUEUE_SAMPLE_MS,
    async () => {
      if (!listening()) return;
      emit('queue.depth', { ...(await count()), at: now() });
    },
    (error) => emit('error', { error, source: 'storage' }),
  );
}

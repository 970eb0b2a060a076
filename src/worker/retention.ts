/**
 * Retention: purges terminal messages (and so their pulled reports) older than the configured age, and idempotency keys
 * whose time is up and spend-cap counters whose period ended, in bounded batches, so storage does not grow without end;
 * and redacts the texts whose `retainText` (`days:N`) came due, before anything is purged.
 */
import type { Emit } from '../observe/events.js';
import { drainInBatches, Periodic } from './periodic.js';
import type { Storage } from '../storage/contract.js';
import { RETENTION_DEFAULTS, type RetentionOptions } from './options.js';

/**
 * Returns the periodic purge of `storage` (start it, close it with the router), or `null`
 * when there is nothing to purge. With `config` false, terminal messages and inbound messages
 * are kept, and only expired idempotency keys and old MO parts are swept, on the default
 * schedule: neither is read again, so keeping them would keep nothing a client can see.
 * Texts due to be redacted are redacted whatever `config` is: a sender asked for it. So are
 * counters purged, of every period but `livePeriods(now)` when given: an ended one is never read again.
 */
export function retentionSweep(
  storage: Storage,
  config: Required<RetentionOptions> | false,
  now: () => number,
  emit: Emit,
  livePeriods?: (now: number) => readonly string[],
): Periodic | null {
  const purgeKeys = storage.purgeIdempotency?.bind(storage);
  const purgeInbound = storage.purgeInbound?.bind(storage);
  // The parts of long MO messages are read again only within minutes of their arrival, so,
  // like expired keys, they go even with `config` false: a limit of 0 takes no message.
  const purgeParts = storage.storeInboundPart === undefined ? undefined : purgeInbound;
  const redactTexts = storage.redactTexts?.bind(storage);
  const purgeCounters = livePeriods === undefined ? undefined : storage.purgeCounters?.bind(storage);
  if (config === false && purgeKeys === undefined && purgeParts === undefined && redactTexts === undefined && purgeCounters === undefined) return null;
  const { intervalMs, batchSize, maxAgeMs } = config === false ? RETENTION_DEFAULTS : config;
  return new Periodic(
    intervalMs,
    async () => {
      if (redactTexts !== undefined) await drainInBatches(batchSize, () => redactTexts(now(), batchSize));
      if (config !== false) await drainInBatches(batchSize, () => storage.purge(now() - maxAgeMs, batchSize));
      // Inbound messages age as terminal messages do: forwarded (or given up on) is done.
      if (config !== false && purgeInbound !== undefined) await drainInBatches(batchSize, () => purgeInbound(now() - maxAgeMs, batchSize));
      else if (purgeParts !== undefined) await purgeParts(now() - maxAgeMs, 0);
      if (purgeKeys !== undefined) await drainInBatches(batchSize, () => purgeKeys(now(), batchSize));
      if (purgeCounters !== undefined) await drainInBatches(batchSize, () => purgeCounters(livePeriods!(now()), batchSize));
    },
    (error) => emit('error', { error, source: 'storage' }),
  );
}

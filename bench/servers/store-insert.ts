/**
 * The storage alone: how many messages a second the storage adapter of BENCH_STORE
 * (`sqlite` or `postgres`, opened as the router servers open it) stores when nothing else
 * runs in the process: no HTTP, no validation, no worker. It is the ceiling of the
 * 100-message cases on that storage, measured in the same run: what the router could
 * accept on one core if everything before the insert cost nothing.
 *
 * BENCH_CONCURRENCY callers (default 8, as the 100-message cases' connections) each store
 * one batch of BENCH_PER_CALL messages (default 100, the bench body's, with the
 * router's values for them) and then the next, for BENCH_WARMUP_SEC and then
 * BENCH_SECONDS measured. Prints one JSON line `{ event: 'done', messages, seconds,
 * cpuSec }` and exits.
 */
import { report } from './host.js';
import { benchMessages, openBenchStorage, storeBenchSettings } from './storages.js';

const { kind, concurrency, perCall, warmupMs, measuredMs } = storeBenchSettings();

const batch = benchMessages(perCall, `bench-store-${kind}`);

const { storage, after } = await openBenchStorage(kind);
try {
  await storage.ready?.();
  const startedAt = Date.now();
  const measureFrom = startedAt + warmupMs;
  const stopAt = measureFrom + measuredMs;
  let stored = 0;
  let cpuAtStart: NodeJS.CpuUsage | null = null;
  const caller = async () => {
    for (let now = Date.now(); now < stopAt; now = Date.now()) {
      if (now >= measureFrom) cpuAtStart ??= process.cpuUsage();
      await storage.insertMessages(batch());
      if (now >= measureFrom) stored += perCall;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
  const cpu = process.cpuUsage(cpuAtStart ?? undefined);
  const seconds = (Date.now() - measureFrom) / 1000;
  process.stdout.write(`${JSON.stringify({ event: 'done', messages: stored, seconds, cpuSec: (cpu.user + cpu.system) / 1e6 })}\n`);
} catch (error) {
  report({ event: 'error', message: String(error) });
} finally {
  await storage.close?.();
  await after();
}

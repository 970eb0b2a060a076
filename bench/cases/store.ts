/** The storage alone: the ceiling of the HTTP and end-to-end cases it comes with. */
import { formatSpread, type CaseResult } from '../report.js';
import { spread } from '../stats.js';
import { log } from '../harness/log.js';
import { options } from '../harness/options.js';
import { runPinnedOnce } from '../harness/servers.js';
import { freshStorage } from '../harness/services.js';
import { SkipError } from '../harness/skip.js';
import type { STORE_CASES } from './catalog.js';

/**
 * Measured seconds of a storage-alone run: at most 3, so that the four cases' twelve runs
 * keep the whole bench under 10 minutes on a slow machine. They repeat one steady loop with
 * nothing else in the process, tens of thousands of messages in 3 s, and runs of 3 s move
 * between runs no more than runs of 8 s do.
 */
const STORE_SECONDS = (): number => Math.min(options.durationSec, 3);

/** What each child of the storage-alone cases does, for the report. */
const STORE_WORK = {
  'store-insert': "its adapter's insertMessages, 8 callers storing 100 messages each at a time, no HTTP and no worker",
  'store-life':
    'its adapter taking messages through the storage calls of their lives (stored leased, each submission recorded, each receipt applied, its report stored leased to the caller as the router leases it, and the attempt recorded), 8 callers with 100 messages each at a time, no HTTP, no carrier, no report sent; msg/s = lives finished',
} as const;

/** Runs of a storage-alone child (bench/servers/store-insert.ts or store-life.ts) with nothing else in the process. */
export async function storeCase(store: (typeof STORE_CASES)[number]): Promise<CaseResult> {
  const title = `${store.what} alone: ${STORE_WORK[store.child]} (bench/servers/${store.child}.ts, a fresh child and storage per run, pinned to core 0, ${options.warmupSec} s warm-up and ${STORE_SECONDS()} s measured)`;
  const rates: number[] = [];
  const cpus: number[] = [];
  const busy: number[] = [];
  const databaseUsPerMessage: number[] = [];
  for (let run = 1; run <= options.runs; run++) {
    let storage: Awaited<ReturnType<typeof freshStorage>> | null = null;
    try {
      storage = await freshStorage(store.script);
      const env = { ...storage.env, BENCH_STORE: store.script, BENCH_WARMUP_SEC: String(options.warmupSec), BENCH_SECONDS: String(STORE_SECONDS()) };
      const r = await runPinnedOnce<{ messages: number; seconds: number; cpuSec: number; databaseCpuSec?: number | null }>(store.child, env);
      rates.push(r.messages / r.seconds);
      cpus.push(r.cpuSec);
      busy.push(r.cpuSec / r.seconds);
      const database = r.databaseCpuSec == null || r.messages === 0 ? null : (r.databaseCpuSec * 1e6) / r.messages;
      if (database !== null) databaseUsPerMessage.push(database);
      log(
        `${store.name} run ${run}: ${Math.round(r.messages / r.seconds)} msg/s, process core ${Math.round((100 * r.cpuSec) / r.seconds)}% busy` +
          (database === null ? '' : `, PostgreSQL ${Math.round(database)} us of CPU per message`),
      );
    } catch (error) {
      return { name: store.name, title, skipped: error instanceof SkipError ? error.message : `failed: ${(error as Error).message}`, notes: [] };
    } finally {
      await storage?.cleanup();
    }
  }
  const database = spread(databaseUsPerMessage);
  const notes = database === null ? [] : [`PostgreSQL's CPU per message, all its processes on this machine: ${formatSpread(database, (n) => String(Math.round(n)))} us`];
  return { name: store.name, title, messagesPerRequest: 100, messagesPerSec: spread(rates), cpuSec: spread(cpus), coreBusy: spread(busy), notes };
}

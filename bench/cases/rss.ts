/** The SQLite router's memory after a large backlog accepted. */
import { runLoad } from '../load.js';
import type { CaseResult } from '../report.js';
import { cpuSeconds, rss, spread } from '../stats.js';
import { HEADERS, PATH, sendBody } from '../harness/bodies.js';
import { log } from '../harness/log.js';
import { options } from '../harness/options.js';
import { startServer, type ServerChild } from '../harness/servers.js';
import { freshStorage } from '../harness/services.js';
import { SkipError } from '../harness/skip.js';

/** The messages the RSS target is stated for. */
export const RSS_TARGET = 1_000_000;
/** The messages the RSS case accepts. */
export const RSS_MESSAGES = options.quick ? 20_000 : RSS_TARGET;
/** How long the RSS case may take to accept them. */
export const RSS_DEADLINE_MS = options.quick ? 30_000 : 90_000;

/** Accepts up to N messages on one SQLite server (100 per request), then reads its RSS. */
export async function rssCase(): Promise<{ result: CaseResult; accepted: number; rssMb: number | null }> {
  const title = `RSS of the SQLite router after accepting up to ${RSS_MESSAGES.toLocaleString('en-US')} messages (100/request, worker running), within ${RSS_DEADLINE_MS / 1000} s`;
  let storage: Awaited<ReturnType<typeof freshStorage>> | null = null;
  let server: ServerChild | null = null;
  try {
    storage = await freshStorage('sqlite');
    server = await startServer('sqlite', storage.env);
    const body = sendBody(100, 'rss');
    const cpu0 = cpuSeconds(server.pid);
    const load = await runLoad({ port: server.port, path: PATH, body, headers: HEADERS, connections: 8, amount: RSS_MESSAGES / 100, deadlineMs: RSS_DEADLINE_MS });
    const cpu1 = cpuSeconds(server.pid);
    const memory = rss(server.pid);
    const accepted = load.ok * 100;
    const notes = [`accepted ${accepted.toLocaleString('en-US')} messages in ${load.seconds.toFixed(1)} s`, `RSS right after: ${memory?.rssMb.toFixed(0) ?? '?'} MiB (peak ${memory?.peakMb.toFixed(0) ?? '?'} MiB)`];
    if (accepted < RSS_MESSAGES) notes.push(`stopped at the ${RSS_DEADLINE_MS / 1000} s bound before N`);
    log(`rss-sqlite: ${notes.join(', ')}`);
    const one = (n: number | null | undefined) => (n === null || n === undefined ? null : spread([n]));
    return {
      result: {
        name: 'rss-sqlite',
        title,
        messagesPerRequest: 100,
        requestsPerSec: one(load.requestsPerSec),
        messagesPerSec: one(load.requestsPerSec * 100),
        p50Ms: one(load.p50Ms),
        p99Ms: one(load.p99Ms),
        cpuSec: one(cpu0 === null || cpu1 === null ? null : cpu1 - cpu0),
        coreBusy: one(cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / load.seconds),
        peakRssMb: one(memory?.peakMb),
        notes,
      },
      accepted,
      rssMb: memory?.rssMb ?? null,
    };
  } catch (error) {
    const reason = error instanceof SkipError ? error.message : `failed: ${(error as Error).message}`;
    return { result: { name: 'rss-sqlite', title, skipped: reason, notes: [] }, accepted: 0, rssMb: null };
  } finally {
    await server?.stop();
    await storage?.cleanup();
  }
}

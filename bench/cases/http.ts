/**
 * The HTTP throughput cases (a send endpoint against the bare Express baseline), and the
 * paired comparisons of `--against` and `--paired`.
 */
import { runLoad, type LoadResult } from '../load.js';
import { cpuSeconds, resetPeakRss, rss, spread } from '../stats.js';
import type { CaseResult } from '../report.js';
import { caseLoad, HEADERS, PATH, sendBody } from '../harness/bodies.js';
import { log } from '../harness/log.js';
import { options } from '../harness/options.js';
import { startServer, type ServerChild, type Variant } from '../harness/servers.js';
import { freshStorage } from '../harness/services.js';
import { SkipError } from '../harness/skip.js';
import { HTTP_CASES, httpSelected, selected, type HttpCase } from './catalog.js';

/** Per-run figures of one HTTP case. */
interface HttpRun {
  load: LoadResult;
  /** Messages the router finished per second of the measured part (`null`: baseline). */
  finishedPerSec: number | null;
  cpu: number | null;
  peakMb: number | null;
  /** Whether the peak RSS could be reset after the warm-up. */
  peakReset: boolean;
}

/**
 * One run of HTTP case `c` (built from `variant`'s tree): a fresh server on fresh storage,
 * the warm-up, then the measured load. Throws a SkipError when nothing was answered 2xx.
 */
async function runHttpOnce(c: HttpCase, variant: Variant = 'current'): Promise<HttpRun> {
  const body = sendBody(c.perRequest, `bench-${c.name}`);
  let storage: Awaited<ReturnType<typeof freshStorage>> | null = null;
  let server: ServerChild | null = null;
  try {
    storage = await freshStorage(c.script);
    server = await startServer(c.script, { ...storage.env, ...c.env }, variant);
    const keys = (part: string) => caseLoad(c, `${variant}-${part}`);
    const load = { port: server.port, path: PATH, body, headers: HEADERS, connections: c.connections };
    await runLoad({ ...load, ...keys('warm'), durationSec: options.warmupSec });
    const finished0 = await server.finished();
    const peakReset = resetPeakRss(server.pid);
    const cpu0 = cpuSeconds(server.pid);
    const result = await runLoad({ ...load, ...keys('run'), durationSec: options.durationSec });
    const cpu1 = cpuSeconds(server.pid);
    const finished1 = await server.finished();
    const memory = rss(server.pid);
    if (result.ok === 0) {
      const why = `no request answered 2xx within the ${options.durationSec} s measured (${result.non2xx} non-2xx, ${result.errors} errors)`;
      throw new SkipError(`${why}${server.stderr() ? `; server: ${server.stderr().split('\n').slice(-2).join(' / ')}` : ''}`);
    }
    return {
      load: result,
      finishedPerSec: finished0 === null || finished1 === null ? null : (finished1 - finished0) / result.seconds,
      cpu: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0,
      peakMb: memory?.peakMb ?? null,
      peakReset,
    };
  } finally {
    await server?.stop();
    await storage?.cleanup();
  }
}

/**
 * `--against` / `--paired`: alternates two servers run by run (`pairs` times, every other
 * pair in the other order) and prints, per selected case, the mean of the per-pair ratios
 * of req/s and of server CPU per request, with their standard deviations. Two runs of a
 * pair are seconds apart, so the machine's drift touches both alike.
 */
export async function compareHttp(): Promise<void> {
  // The baselines came along with the selected cases; against a commit they are compared only when asked for.
  const comparisons = httpSelected.filter((c) => options.against === null || selected(c.name)).flatMap((c) => {
    if (options.against !== null) return [{ name: c.name, a: { c, variant: 'against' as Variant }, b: { c, variant: 'current' as Variant } }];
    const base = HTTP_CASES.find((x) => x.name === c.baseline);
    return base === undefined ? [] : [{ name: `${c.name} vs ${base.name}`, a: { c: base, variant: 'current' as Variant }, b: { c, variant: 'current' as Variant } }];
  });
  const [aLabel, bLabel] = options.against !== null ? [options.against, 'working tree'] : ['baseline', 'case'];
  const rows: string[] = [];
  for (const { name, a, b } of comparisons) {
    const pairs: { a: HttpRun; b: HttpRun }[] = [];
    try {
      for (let pair = 1; pair <= options.runs; pair++) {
        const order = pair % 2 === 1 ? [a, b] : [b, a];
        const done = new Map<typeof a, HttpRun>();
        for (const side of order) done.set(side, await runHttpOnce(side.c, side.variant));
        pairs.push({ a: done.get(a)!, b: done.get(b)! });
        log(`${name} pair ${pair}: ${aLabel} ${Math.round(pairs.at(-1)!.a.load.requestsPerSec)}, ${bLabel} ${Math.round(pairs.at(-1)!.b.load.requestsPerSec)} req/s`);
      }
    } catch (error) {
      rows.push(`| ${name} | skipped: ${error instanceof SkipError ? error.message : String(error)} | | | |`);
      continue;
    }
    const perRequestCpu = (r: HttpRun) => (r.cpu ?? NaN) / (r.load.requestsPerSec * r.load.seconds);
    const speed = meanSd(pairs.map((p) => p.b.load.requestsPerSec / p.a.load.requestsPerSec));
    const cpu = meanSd(pairs.map((p) => perRequestCpu(p.b) / perRequestCpu(p.a)));
    const meanRate = (side: 'a' | 'b') => Math.round(meanSd(pairs.map((p) => p[side].load.requestsPerSec)).mean);
    rows.push(
      `| ${name} | ${meanRate('a')} | ${meanRate('b')} | ` +
        `${speed.mean.toFixed(3)} +- ${speed.sd.toFixed(3)} | ${cpu.mean.toFixed(3)} +- ${cpu.sd.toFixed(3)} |`,
    );
  }
  console.log(
    [
      '',
      `${options.runs} pairs per line, ${options.warmupSec} s warm-up and ${options.durationSec} s measured per run; ratios are ${bLabel} / ${aLabel}, mean +- standard deviation over the pairs`,
      '',
      `| case | ${aLabel} req/s | ${bLabel} req/s | req/s ratio | server CPU per request ratio |`,
      '| --- | ---: | ---: | ---: | ---: |',
      ...rows,
    ].join('\n'),
  );
}

/**
 * The selected HTTP cases in the order round `run` (from 1) runs them: every other round
 * backwards, so no case always follows the same neighbour (a PostgreSQL case's background
 * writes, say) and drift falls on all alike.
 */
export function casesOfRound(run: number): readonly HttpCase[] {
  return run % 2 === 1 ? httpSelected : [...httpSelected].reverse();
}

function meanSd(values: readonly number[]): { mean: number; sd: number } {
  const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
  return { mean, sd: Math.sqrt(values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / values.length) };
}

/**
 * The HTTP throughput cases, interleaved run by run (baseline, memory, sqlite, ... then
 * the same backwards) so slow drift of the machine touches every case alike. Each run starts a fresh
 * server with fresh storage, warms it up, then measures.
 */
export async function httpCases(): Promise<CaseResult[]> {
  const runs = new Map<string, HttpRun[]>(httpSelected.map((c) => [c.name, []]));
  // Each case's run of each round, so that a case is compared with its baseline round by round.
  const rounds = new Map<string, NonNullable<CaseResult['rounds']>>(httpSelected.map((c) => [c.name, Array.from({ length: options.runs }, () => null)]));
  const skipped = new Map<string, string>();
  const notes = new Map<string, Set<string>>(httpSelected.map((c) => [c.name, new Set<string>()]));
  for (let run = 1; run <= options.runs; run++) {
    for (const c of casesOfRound(run)) {
      if (skipped.has(c.name)) continue;
      try {
        const result = await runHttpOnce(c);
        if (result.load.non2xx > 0 || result.load.errors > 0) {
          notes.get(c.name)!.add(`run ${run}: ${result.load.non2xx} non-2xx, ${result.load.errors} errors (figures count 2xx only)`);
        }
        if (!result.peakReset) notes.get(c.name)!.add('peak RSS includes the warm-up (clear_refs not writable)');
        runs.get(c.name)!.push(result);
        rounds.get(c.name)![run - 1] = { requestsPerSec: result.load.requestsPerSec, p99Ms: result.load.p99Ms };
        log(
          `${c.name} run ${run}: ${Math.round(result.load.requestsPerSec)} req/s, ${Math.round(result.load.requestsPerSec * c.perRequest)} msg/s, ` +
            (result.finishedPerSec === null ? '' : `${Math.round(result.finishedPerSec)} finished/s, `) +
            `p50 ${result.load.p50Ms} ms, p99 ${result.load.p99Ms} ms, cpu ${result.cpu?.toFixed(2) ?? '?'} s, peak ${result.peakMb?.toFixed(0) ?? '?'} MiB`,
        );
      } catch (error) {
        const reason = error instanceof SkipError ? error.message : `failed: ${(error as Error).stack ?? String(error)}`;
        skipped.set(c.name, reason);
        log(`${c.name}: skipped: ${reason}`);
      }
    }
  }
  return httpSelected.map((c): CaseResult => {
    const base: CaseResult = { name: c.name, title: c.title, messagesPerRequest: c.perRequest, notes: [...notes.get(c.name)!] };
    if (c.baseline !== undefined) base.baseline = c.baseline;
    const reason = skipped.get(c.name);
    const r = runs.get(c.name)!;
    if (reason !== undefined && r.length === 0) return { ...base, skipped: reason };
    if (reason !== undefined) base.notes.push(`later runs skipped: ${reason}`);
    return {
      ...base,
      rounds: rounds.get(c.name)!,
      requestsPerSec: spread(r.map((x) => x.load.requestsPerSec)),
      messagesPerSec: spread(r.map((x) => x.load.requestsPerSec * c.perRequest)),
      finishedPerSec: spread(r.map((x) => x.finishedPerSec ?? NaN)),
      p50Ms: spread(r.map((x) => x.load.p50Ms)),
      p99Ms: spread(r.map((x) => x.load.p99Ms)),
      cpuSec: spread(r.map((x) => x.cpu ?? NaN)),
      coreBusy: spread(r.map((x) => (x.cpu ?? NaN) / x.load.seconds)),
      peakRssMb: spread(r.map((x) => x.peakMb ?? NaN)),
    };
  });
}

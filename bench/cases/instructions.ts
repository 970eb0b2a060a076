/** `--instructions`: the HTTP cases' instructions per request, counted by callgrind. */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { callgrindPrefix, callgrindProblem, instructionsSoFar, startCounting } from '../instructions.js';
import { runLoad } from '../load.js';
import { formatSpread, times } from '../report.js';
import { pairedRatio, spread } from '../stats.js';
import { caseLoad, HEADERS, PATH, sendBody } from '../harness/bodies.js';
import { log } from '../harness/log.js';
import { options } from '../harness/options.js';
import { startServer, type ServerChild } from '../harness/servers.js';
import { scratch } from '../harness/scratch.js';
import { freshStorage } from '../harness/services.js';
import { SkipError } from '../harness/skip.js';
import { httpSelected } from './catalog.js';
import { casesOfRound } from './http.js';

/** Requests counted per run of `--instructions`, for one-message and for 100-message bodies. */
const INSTRUCTION_REQUESTS = options.quick ? { 1: 300, 100: 20 } : { 1: 1_000, 100: 50 };
/**
 * How many times as many requests go uncounted first. V8 is still compiling long after the
 * throughput cases' warm-up would do: the baseline counted 1.60M instructions a request
 * after 1x, 0.87M after 5x and 0.82M after 10x, the difference being mostly TurboFan's.
 */
const INSTRUCTION_WARMUP = options.quick ? 3 : 10;

/**
 * `--instructions`: each selected HTTP case (and its baseline) under callgrind, in rounds
 * like the throughput cases: a fresh server on fresh storage, a long warm-up uncounted, then
 * the requests counted. Prints instructions per request and per message, and the
 * ratio to the baseline by round. The count is of user-space work only (see
 * bench/instructions.ts); it is for telling whether a change to the code costs or saves
 * work on a machine too noisy for the throughput cases to tell.
 */
export async function instructionCases(): Promise<void> {
  const problem = callgrindProblem();
  if (problem !== null) {
    log(`--instructions: nothing measured: ${problem}`);
    return;
  }
  const perRound = new Map<string, (number | null)[]>(httpSelected.map((c) => [c.name, Array.from({ length: options.runs }, () => null)]));
  for (let run = 1; run <= options.runs; run++) {
    for (const c of casesOfRound(run)) {
      const amount = INSTRUCTION_REQUESTS[c.perRequest === 1 ? 1 : 100];
      const outDir = mkdtempSync(join(scratch, 'callgrind-'));
      let storage: Awaited<ReturnType<typeof freshStorage>> | null = null;
      let server: ServerChild | null = null;
      try {
        storage = await freshStorage(c.script);
        server = await startServer(c.script, { ...storage.env, ...c.env }, 'current', { wrap: callgrindPrefix(outDir), listenWithinMs: 180_000 });
        const load = { port: server.port, path: PATH, body: sendBody(c.perRequest, `bench-${c.name}`), headers: HEADERS, connections: c.connections, amount, deadlineMs: 600_000 };
        const keys = (part: string) => caseLoad(c, `${run}-${part}`);
        await runLoad({ ...load, ...keys('warm'), amount: amount * INSTRUCTION_WARMUP });
        startCounting(server.pid);
        const result = await runLoad({ ...load, ...keys('run') });
        const instructions = instructionsSoFar(server.pid, outDir);
        if (instructions === null || result.ok === 0) throw new SkipError(`no count read (${result.ok} requests answered 2xx)`);
        perRound.get(c.name)![run - 1] = instructions / result.ok;
        log(`${c.name} run ${run}: ${Math.round(instructions / result.ok).toLocaleString('en-US')} instructions per request (${result.ok} requests counted, ${result.non2xx} non-2xx)`);
      } catch (error) {
        log(`${c.name} run ${run}: skipped: ${error instanceof SkipError ? error.message : String(error)}`);
      } finally {
        await server?.stop();
        await storage?.cleanup();
        // BENCH_CALLGRIND_DIR=<dir>: keep the counts, per case and round, for callgrind_annotate.
        if (process.env.BENCH_CALLGRIND_DIR) cpSync(outDir, join(process.env.BENCH_CALLGRIND_DIR, `${c.name}-${run}`), { recursive: true });
        rmSync(outDir, { recursive: true, force: true });
      }
    }
  }
  const thousands = (n: number) => `${Math.round(n / 1000).toLocaleString('en-US')}k`;
  const rows = httpSelected.map((c) => {
    const counts = perRound.get(c.name)!;
    const base = c.baseline === undefined ? null : perRound.get(c.baseline);
    const ratio = base ? pairedRatio(counts, base) : null;
    return (
      `| ${c.name} | ${formatSpread(spread(counts.map((n) => n ?? NaN)), thousands)} | ` +
      `${formatSpread(spread(counts.map((n) => (n ?? NaN) / c.perRequest)), thousands)} | ${formatSpread(ratio, times)} |`
    );
  });
  console.log(
    [
      '',
      `instructions counted by callgrind (user space, all threads) over ${INSTRUCTION_REQUESTS[1]} one-message or ${INSTRUCTION_REQUESTS[100]} 100-message requests after ${INSTRUCTION_WARMUP} times as many uncounted; median [min-max] of ${options.runs} run(s); the ratio is by round`,
      '',
      '| case | instructions per request | per message | vs baseline |',
      '| --- | ---: | ---: | ---: |',
      ...rows,
    ].join('\n'),
  );
}

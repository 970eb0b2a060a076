/**
 * `npm run bench`: measures the sms-outbox router against a bare Express baseline in the
 * same run. Each server is a child process pinned to core 0; this process (the load
 * generator, the delivery-report receiver, the test SMSC) is pinned to core 1. Traffic
 * goes to 127.0.0.1 only, every load run is bounded in time.
 *
 * Options: `--quick` (short runs, one each, for development), `--case a,b` (run the cases
 * whose names contain a or b, or `=name` for that case alone; the baselines they are
 * compared with come along),
 * `--duration <s>` (measured seconds per HTTP run), `--runs <n>`, `--connections <n>` (every
 * HTTP case and its baseline with n connections), `--tsx` (run the servers
 * with `node --import tsx` instead of a build), `--write` / `--no-write` (BENCHMARKS.md is
 * written by default only by a full, unfiltered run), `--note <text>` (added to the report).
 * Comparisons (they print a table and never write BENCHMARKS.md; 6 pairs of 5 s by default):
 * `--against <git-ref>` runs each selected HTTP case built from that commit and from the
 * working tree in alternation, `--paired` each selected case and its baseline; both report
 * the mean of the per-pair ratios with its standard deviation, which on a noisy machine
 * says far more than two medians taken minutes apart. `--instructions` counts, with
 * valgrind's callgrind, the instructions each selected HTTP case and its baseline execute
 * per request (bench/instructions.ts): 3-6% apart from run to run where req/s moves by
 * tens of percent, for judging a change to the code on a noisy machine (2 runs by default).
 * Environment: `BENCH_CPU_PROF=<dir>` has every server write a V8 CPU profile there when it
 * exits (to see what limits a figure); `BENCH_CALLGRIND_DIR=<dir>` keeps `--instructions`'
 * callgrind counts there, per case and round; `BENCH_RATE_LIMIT=off` runs the routers without limits.
 *
 * This file runs the families in order and writes the report. The cases live in
 * bench/cases/ by family (catalog.ts names them all and holds the selection; http,
 * instructions, e2e, smpp, store, fair, count-sms, numbers, rss), what they share in bench/harness/
 * (options, pinning, the server children, storage services, the machine), and the targets
 * each run is judged by in bench/targets.ts.
 */
// The options first: `--help` and a bad option end the process before anything starts.
import { options, root, startedAt } from './harness/options.js';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { publish, type CaseResult, type RunReport } from './report.js';
import { log } from './harness/log.js';
import { machine, machineBusy } from './harness/machine.js';
import { pinning } from './harness/pinning.js';
import { buildServers, built, runMode } from './harness/servers.js';
import { scratch } from './harness/scratch.js';
import { FAIR_CASES, httpSelected, LIST_CASES, otherSelected, STORE_CASES } from './cases/catalog.js';
import { listCase } from './cases/list.js';
import { countSmsCase } from './cases/count-sms.js';
import { numbersCase } from './cases/numbers.js';
import { E2E_MESSAGES, E2E_WARMUP, endToEnd } from './cases/e2e.js';
import { scriptCase } from './cases/fair.js';
import { compareHttp, httpCases } from './cases/http.js';
import { instructionCases } from './cases/instructions.js';
import { RSS_DEADLINE_MS, RSS_MESSAGES, RSS_TARGET, rssCase } from './cases/rss.js';
import { smppBindsCase, smppCases } from './cases/smpp.js';
import { storeCase } from './cases/store.js';
import { limits, verdicts } from './targets.js';

async function main(): Promise<void> {
  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  log(`${command}: ${pinning.note}`);
  const busy = await machineBusy(1000);
  const setup = [pinning.note];
  if (busy !== null && busy > 0.1) {
    setup.push(`other work was running: ${Math.round(busy * 100)}% of all cores busy in the second before the run started, so absolute figures may be low and noisier; ratios within the run are less affected`);
  }
  setup.push(...options.notes);
  await buildServers();
  setup.push(runMode);
  setup.push(
    `HTTP cases: per run a fresh server and fresh storage, ${options.warmupSec} s warm-up, ${options.durationSec} s measured; ${options.runs} run(s) per case, cases interleaved run by run (a round runs each case once), every other round in reverse order; a ratio to a baseline is the median [min-max] of the ratios of the two cases' runs of each round, which a drift of the machine between rounds does not skew as it skews a ratio of two medians`,
    `CPU: utime+stime of the server from /proc/<pid>/stat over the measured part; peak RSS: VmHWM from /proc/<pid>/status, reset after the warm-up via /proc/<pid>/clear_refs`,
    'finished msg/s: messages that reached a terminal state (delivered, here) per second of the measured part, counted by a `message.status` listener in the router server and read by SIGUSR2 before and after it; msg/s counts messages accepted. Where finished is well below accepted, the worker fell behind and the backlog grew during the run: the accept rate is then not a rate the gateway can sustain',
    `end to end: N = ${E2E_MESSAGES.toLocaleString('en-US')} messages per run after a warm-up of ${E2E_WARMUP.toLocaleString('en-US')} through the same server (each run is a fresh process; the raw SMPP clients warm up alike)${options.quick ? '' : '; a fixed N keeps the run under 10 minutes'}; simulator latency 1-5 ms; reports to a receiver in the harness process on 127.0.0.1`,
    `RSS case: N = ${RSS_MESSAGES.toLocaleString('en-US')} messages within ${RSS_DEADLINE_MS / 1000} s${RSS_MESSAGES < RSS_TARGET ? ' (--quick: smaller than the 1,000,000 of the target)' : ''}`,
  );
  for (const [key, entry] of built) {
    if ('error' in entry) log(`note: ${key} server does not build: ${entry.error}`);
  }
  if (options.against !== null || options.paired) {
    await compareHttp();
    return;
  }
  if (options.instructions) {
    await instructionCases();
    return;
  }

  const cases: CaseResult[] = [];
  if (httpSelected.length > 0) cases.push(...(await httpCases()));
  if (otherSelected.has('e2e-simulator')) {
    cases.push(await endToEnd('e2e-simulator', 'end to end with the simulator (memory storage): HTTP accept to delivery report received', {}));
  }
  // The same through a durable storage: every step of a message (insert, submission,
  // receipt, report, report attempt) is committed on its way, so this is the rate the
  // gateway sustains, where sqlite-100 / postgres-100 measure a burst taken in.
  for (const [name, script, what] of [
    ['e2e-sqlite', 'sqlite', 'SQLite (temp file, synchronous=FULL)'],
    ['e2e-postgres', 'postgres', 'PostgreSQL (fresh schema)'],
  ] as const) {
    if (otherSelected.has(name)) cases.push(await endToEnd(name, `end to end with the simulator, ${what}: HTTP accept to delivery report received`, {}, script));
  }
  if (otherSelected.has('smpp-raw') || otherSelected.has('e2e-smpp')) cases.push(...(await smppCases()));
  for (const store of STORE_CASES) {
    if (otherSelected.has(store.name)) cases.push(await storeCase(store));
  }
  if (otherSelected.has('smpp-binds')) cases.push(await smppBindsCase());
  if (otherSelected.has('count-sms')) cases.push(await countSmsCase());
  if (otherSelected.has('numbers')) cases.push(await numbersCase());
  for (const c of FAIR_CASES) {
    if (otherSelected.has(c.name)) cases.push(await scriptCase(c));
  }
  for (const c of LIST_CASES) {
    if (otherSelected.has(c.name)) cases.push(await listCase(c));
  }
  let rssOutcome: { accepted: number; rssMb: number | null } | null = null;
  if (otherSelected.has('rss-sqlite')) {
    const outcome = await rssCase();
    cases.push(outcome.result);
    rssOutcome = outcome;
  }

  const totalSec = (Date.now() - startedAt) / 1000;
  if (totalSec > 600) setup.push(`the run took ${Math.round(totalSec)} s, over the 10-minute budget`);
  const report: RunReport = {
    command,
    startedAt: new Date(startedAt).toISOString(),
    totalSec,
    machine: machine(),
    setup,
    cases,
    targets: verdicts(cases, rssOutcome),
    limits: limits(cases),
  };
  publish(report, options.write ? join(root, 'BENCHMARKS.md') : null);
  if (!options.write) log('BENCHMARKS.md not written (a quick or filtered run; pass --write to write it)');
}

try {
  await main();
} finally {
  if (options.against !== null) {
    try {
      execFileSync('git', ['worktree', 'remove', '--force', join(scratch, 'against')], { cwd: root, stdio: 'ignore' });
    } catch {
      // Never added (a bad ref): nothing to remove.
    }
  }
  rmSync(scratch, { recursive: true, force: true });
}
// Nothing of the harness should keep running: fetch keep-alive sockets would hold it open.
process.exit(0);
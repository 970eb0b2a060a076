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
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { cpus, freemem, loadavg, totalmem, tmpdir } from 'node:os';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createInterface } from 'node:readline';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runLoad, type LoadResult } from './load.js';
import { cpuSeconds, pairedRatio, resetPeakRss, rss, spread } from './stats.js';
import { callgrindPrefix, callgrindProblem, instructionsSoFar, startCounting } from './instructions.js';
import { caseRatio, formatSpread, publish, times, type CaseResult, type RunReport, type TargetVerdict } from './report.js';
import { BENCH_KEY, BENCH_PROFILE, benchItems, type ServerEvent } from './servers/host.js';
import { COUNT_SMS_WARMUPS, NAIVE_WARMUPS, type CountSmsBenchResult } from './count-sms.js';
import { IDEMPOTENCY_CASE, IDEMPOTENCY_TARGET, SQLITE_IDEMPOTENCY_CASE } from './idempotency.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const startedAt = Date.now();

// ---------------------------------------------------------------------------------------
// Options

interface Options {
  quick: boolean;
  filter: string[] | null;
  durationSec: number;
  warmupSec: number;
  runs: number;
  tsx: boolean;
  write: boolean;
  notes: string[];
  /** `--against <git-ref>`: paired runs of the HTTP cases built from that ref and from the working tree. */
  against: string | null;
  /** `--paired`: paired runs of each HTTP case and its baseline. */
  paired: boolean;
  /** `--instructions`: each selected HTTP case's instructions per request, under callgrind (bench/instructions.ts). */
  instructions: boolean;
  /** `--connections <n>`: autocannon's connections for every HTTP case, baselines included (`null`: each case's own). */
  connections: number | null;
}

function parseArgs(argv: readonly string[]): Options {
  let quick = false;
  let filter: string[] | null = null;
  let duration: number | null = null;
  let runs: number | null = null;
  let tsx = false;
  let write: boolean | null = null;
  let against: string | null = null;
  let paired = false;
  let instructions = false;
  let connections: number | null = null;
  const notes: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--quick') quick = true;
    else if (arg === '--case') filter = value().split(',').map((s) => s.trim()).filter(Boolean);
    else if (arg === '--duration') duration = Number(value());
    else if (arg === '--runs') runs = Number(value());
    else if (arg === '--tsx') tsx = true;
    else if (arg === '--write') write = true;
    else if (arg === '--no-write') write = false;
    else if (arg === '--note') notes.push(value());
    else if (arg === '--against') against = value();
    else if (arg === '--paired') paired = true;
    else if (arg === '--instructions') instructions = true;
    else if (arg === '--connections') connections = Number(value());
    else if (arg === '--help' || arg === '-h') {
      console.log('usage: npm run bench -- [--quick] [--case a,b] [--duration s] [--runs n] [--tsx] [--write|--no-write] [--note text] [--connections n] [--against <git-ref> | --paired | --instructions]');
      process.exit(0);
    } else throw new Error(`unknown option ${arg} (try --help)`);
  }
  if (duration !== null && !(duration > 0)) throw new Error('--duration must be a positive number of seconds');
  if (runs !== null && !(Number.isInteger(runs) && runs > 0)) throw new Error('--runs must be a positive integer');
  if (connections !== null && !(Number.isInteger(connections) && connections > 0)) throw new Error('--connections must be a positive integer');
  if ([against !== null, paired, instructions].filter(Boolean).length > 1) throw new Error('--against, --paired and --instructions are three different comparisons: pick one');
  if ((against !== null || paired) && tsx) throw new Error('--against and --paired compare bundles: drop --tsx');
  const comparing = against !== null || paired || instructions;
  return {
    quick,
    filter,
    durationSec: duration ?? (quick ? 3 : comparing ? 5 : 8),
    warmupSec: quick ? 1 : 2,
    runs: runs ?? (quick ? 1 : instructions ? 2 : comparing ? 6 : 3),
    tsx,
    write: !comparing && (write ?? (!quick && filter === null && duration === null && runs === null && connections === null)),
    notes,
    against,
    paired,
    instructions,
    connections,
  };
}

const options = parseArgs(process.argv.slice(2));

// ---------------------------------------------------------------------------------------
// Pinning: the servers on core 0, this process (load generator) on core 1.

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const cores = cpus().length;
const pinning = (() => {
  if (!hasTaskset()) return { server: [] as string[], note: 'taskset not found: servers and load generator are NOT pinned; they share all cores' };
  if (cores < 2) return { server: [] as string[], note: `only ${cores} core: nothing pinned, server and load generator share it` };
  try {
    // -a: every thread this process already has (libuv pool, V8 helpers); later ones inherit.
    execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  } catch (error) {
    return { server: ['taskset', '-c', '0'], note: `servers pinned to core 0 (taskset -c 0); pinning the harness to core 1 failed (${String(error)})` };
  }
  return {
    server: ['taskset', '-c', '0'],
    note: 'servers (and the raw SMPP client and the countSms child) pinned to core 0 with `taskset -c 0`; the harness (autocannon, the DLR receiver) and the test SMSC pinned to core 1 (`taskset -a -p -c 1`)',
  };
})();

// ---------------------------------------------------------------------------------------
// Server children

const SERVER_SCRIPTS = ['baseline', 'memory', 'sqlite', 'postgres', 'smpp-raw', 'count-sms', 'store-insert', 'store-life'] as const;
type ServerScript = (typeof SERVER_SCRIPTS)[number];

const buildDir = join(root, 'node_modules', '.cache', 'sms-outbox-bench');
/** Which tree a server was built from: the working tree, or the `--against` commit. */
type Variant = 'current' | 'against';
const built = new Map<`${Variant}/${ServerScript}`, { file: string } | { error: string }>();
let runMode = '';

/**
 * Bundles each server script with esbuild (what tsup uses; dependencies stay external) into
 * node_modules/.cache, so the servers run on plain `node` without tsx's loader. One script
 * that fails to build (a src/ file not there yet) skips only its cases. With `--against`,
 * the scripts of that commit (checked out in a temporary git worktree) are bundled too,
 * into a subfolder, where they still find this checkout's node_modules.
 */
async function buildServers(): Promise<void> {
  if (options.tsx) {
    runMode = 'servers run with `node --import tsx bench/servers/<case>.ts` (--tsx)';
    return;
  }
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch (error) {
    if (options.against !== null || options.paired) throw new Error(`esbuild not loadable, so nothing to compare: ${String(error)}`);
    runMode = `servers run with \`node --import tsx\` (esbuild not loadable: ${String(error)})`;
    options.tsx = true;
    return;
  }
  const trees: [Variant, string, string][] = [['current', root, buildDir]];
  if (options.against !== null) {
    const tree = join(scratch, 'against');
    execFileSync('git', ['worktree', 'add', '--detach', tree, options.against], { cwd: root, stdio: 'ignore' });
    trees.push(['against', tree, join(buildDir, 'against')]);
  }
  for (const [variant, tree, outDir] of trees) {
    mkdirSync(outDir, { recursive: true });
    for (const script of SERVER_SCRIPTS) {
      const outfile = join(outDir, `${script}.mjs`);
      try {
        await esbuild.build({
          entryPoints: [join(tree, 'bench', 'servers', `${script}.ts`)],
          outfile,
          bundle: true,
          platform: 'node',
          format: 'esm',
          target: 'node20',
          packages: 'external',
          sourcemap: 'linked',
          logLevel: 'silent',
        });
        built.set(`${variant}/${script}`, { file: outfile });
      } catch (error) {
        const first = (error as { errors?: { text: string; location?: { file: string } | null }[] }).errors?.[0];
        built.set(`${variant}/${script}`, { error: first ? `${first.text}${first.location ? ` (${first.location.file})` : ''}` : String(error) });
      }
    }
  }
  runMode =
    'servers run with plain `node` on an esbuild bundle of bench/servers/<case>.ts and src/ (the same bundler and target as `npm run build`; dependencies external), so no tsx loader in the measured process';
}

/** A running server child. */
interface ServerChild {
  pid: number;
  port: number;
  /** Sends SIGTERM and waits for the exit (SIGKILL after 15 s). */
  stop(): Promise<void>;
  /** Messages the router has finished so far (SIGUSR2); `null` from a server without a router, or no answer in 5 s. */
  finished(): Promise<number | null>;
  /** The last lines of its stderr. */
  stderr(): string;
}

class SkipError extends Error {}

/**
 * The command and arguments that run `script` (of `variant`'s tree) pinned to the server
 * core, under `wrap` (a command prefix such as callgrind's) if given.
 */
function pinnedCommand(script: ServerScript, variant: Variant = 'current', wrap: readonly string[] = []): [string, string[]] {
  let args: string[];
  if (options.tsx) args = ['--import', 'tsx', join(root, 'bench', 'servers', `${script}.ts`)];
  else {
    const entry = built.get(`${variant}/${script}`);
    if (!entry) throw new SkipError(`${script} not built`);
    if ('error' in entry) throw new SkipError(`${script} does not build: ${entry.error}`);
    // BENCH_CPU_PROF=<dir>: each child writes a V8 CPU profile there when it exits.
    args = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`, entry.file] : [entry.file];
  }
  const [command, ...prefix] = [...pinning.server, ...wrap, process.execPath];
  return [command!, [...prefix, ...args]];
}

/** How a server child is launched beyond its script: under a command prefix, given longer to start. */
interface Launch {
  /** A command prefix (callgrind's, say). */
  wrap?: readonly string[];
  /** How long it may take to listen; default 30 s. */
  listenWithinMs?: number;
}

/** Starts `script` (of `variant`'s tree) pinned to the server core and resolves once it prints its port. */
async function startServer(script: ServerScript, env: Record<string, string> = {}, variant: Variant = 'current', launch: Launch = {}): Promise<ServerChild> {
  const [command, args] = pinnedCommand(script, variant, launch.wrap);
  const listenWithinMs = launch.listenWithinMs ?? 30_000;
  const child: ChildProcess = spawn(command, args, {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const errLines: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    errLines.push(line);
    if (errLines.length > 20) errLines.shift();
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const events: ServerEvent[] = [];
  let onProgress: ((finished: number | null) => void) | null = null;
  const port = await new Promise<number>((done, fail) => {
    const timer = setTimeout(() => fail(new SkipError(`${script} server did not listen within ${listenWithinMs / 1000} s: ${errLines.slice(-3).join(' / ')}`)), listenWithinMs);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const event = JSON.parse(line) as ServerEvent;
      if (event.event === 'progress') {
        onProgress?.(event.finished);
        return;
      }
      events.push(event);
      if (event.event === 'listening') {
        clearTimeout(timer);
        done(event.port);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      fail(new SkipError(`${script} server exited before listening: ${errLines.filter((l) => l.trim() !== '').slice(-4).join(' / ') || `code ${child.exitCode}`}`));
    });
  });
  return {
    pid: child.pid!,
    port,
    stderr: () => errLines.join('\n'),
    finished: () =>
      new Promise<number | null>((done) => {
        const timer = setTimeout(() => settle(null), 5_000);
        const settle = (finished: number | null) => {
          clearTimeout(timer);
          onProgress = null;
          done(finished);
        };
        onProgress = settle;
        child.kill('SIGUSR2');
      }),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------------------------------
// Bodies

function sendBody(count: number, prefix: string, callbackUrl?: string): string {
  const messages = benchItems(count, prefix);
  return JSON.stringify({ profile_code: BENCH_PROFILE, messages, ...(callbackUrl ? { dlr_callback_url: callbackUrl } : {}) });
}

const HEADERS = { 'x-api-key': BENCH_KEY };
const PATH = '/api/outbox/create';

// ---------------------------------------------------------------------------------------
// Services

const PG = {
  host: process.env.PGHOST ?? '127.0.0.1',
  port: Number(process.env.PGPORT ?? 5432),
  user: process.env.PGUSER ?? 'postgres',
  database: process.env.PGDATABASE ?? 'test',
};

/** Runs one SQL statement on a short-lived connection; rejects when PostgreSQL is unreachable. */
async function pgQuery(sql: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ ...PG, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

let pgProblem: string | null | undefined;
async function postgresProblem(): Promise<string | null> {
  if (pgProblem === undefined) {
    try {
      await pgQuery('SELECT 1');
      pgProblem = null;
    } catch (error) {
      pgProblem = `PostgreSQL unreachable at ${PG.host}:${PG.port} (${(error as Error).message})`;
    }
  }
  return pgProblem;
}

const scratch = mkdtempSync(join(tmpdir(), 'sms-outbox-bench-'));
let scratchCount = 0;

/** Env and cleanup giving `script` fresh storage for one server start. */
async function freshStorage(script: ServerScript): Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }> {
  const n = scratchCount++;
  if (script === 'sqlite') {
    const dir = join(scratch, `sqlite-${n}`);
    mkdirSync(dir);
    return { env: { BENCH_SQLITE_PATH: join(dir, 'bench.db') }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  if (script === 'postgres') {
    const problem = await postgresProblem();
    if (problem !== null) throw new SkipError(problem);
    const schema = `bench_${process.pid}_${n}`;
    await pgQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    // CHECKPOINT after the drop: the server writes the run's dirty pages now, rather than
    // in the background during the next case (PostgreSQL is not pinned and shares core 0).
    const cleanup = async () => {
      await pgQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      await pgQuery('CHECKPOINT').catch(() => undefined);
    };
    return { env: { BENCH_PG_SCHEMA: schema }, cleanup };
  }
  return { env: {}, cleanup: async () => undefined };
}

// ---------------------------------------------------------------------------------------
// Cases

interface HttpCase {
  name: string;
  title: string;
  script: ServerScript;
  perRequest: number;
  connections: number;
  baseline?: string;
  /** Extra environment for the server (BENCH_RATE_LIMIT=off, say). */
  env?: Record<string, string>;
  /** Every request with an `Idempotency-Key` of its own (bench/idempotency.ts). */
  idempotencyKeys?: boolean;
}

/**
 * The HTTP cases. A case and its baseline always run with the same number of connections:
 * 16 for one-message bodies and 8 for 100-message bodies unless `--connections` sets one
 * count for all (see docs/sqlite.md#performance for why SQLite's ratio depends on it).
 */
const HTTP_CASES: HttpCase[] = ([
  { name: 'baseline-1', title: 'bare Express 5 + express.json(), one-message body, answers a one-item array', script: 'baseline', perRequest: 1, connections: 16 },
  { name: 'memory-1', title: 'quick send, 1 message/request, memory storage, simulator carrier, worker running', script: 'memory', perRequest: 1, connections: 16, baseline: 'baseline-1' },
  { name: 'memory-1-nolimits', title: 'memory-1 with `rateLimit: false`: the cost of the three limiters is 1 - memory-1 / this', script: 'memory', perRequest: 1, connections: 16, baseline: 'baseline-1', env: { BENCH_RATE_LIMIT: 'off' } },
  IDEMPOTENCY_CASE,
  { name: 'sqlite-1', title: 'quick send, 1 message/request, SQLite (temp file, default synchronous=FULL)', script: 'sqlite', perRequest: 1, connections: 16, baseline: 'baseline-1' },
  SQLITE_IDEMPOTENCY_CASE,
  { name: 'postgres-1', title: 'quick send, 1 message/request, PostgreSQL (fresh schema, pool of 20)', script: 'postgres', perRequest: 1, connections: 16, baseline: 'baseline-1' },
  { name: 'baseline-100', title: 'bare Express 5 baseline fed the 100-message body, answers a 100-item array', script: 'baseline', perRequest: 100, connections: 8 },
  { name: 'memory-100', title: 'quick send, 100 messages/request, memory storage', script: 'memory', perRequest: 100, connections: 8, baseline: 'baseline-100' },
  { name: 'sqlite-100', title: 'quick send, 100 messages/request, SQLite', script: 'sqlite', perRequest: 100, connections: 8, baseline: 'baseline-100' },
  { name: 'postgres-100', title: 'quick send, 100 messages/request, PostgreSQL', script: 'postgres', perRequest: 100, connections: 8, baseline: 'baseline-100' },
] satisfies HttpCase[]).map((c) => ({ ...c, connections: options.connections ?? c.connections }));

/**
 * The storage alone, the ceiling of the case it comes with: `store-insert` children store
 * what a 100-message case accepts, `store-life` children take messages through the storage
 * calls of their whole lives, as an end-to-end case does.
 */
const STORE_CASES = [
  { name: 'store-sqlite-100', with: 'sqlite-100', script: 'sqlite', child: 'store-insert', what: 'SQLite (temp file, synchronous=FULL)' },
  { name: 'store-postgres-100', with: 'postgres-100', script: 'postgres', child: 'store-insert', what: 'PostgreSQL (fresh schema, pool of 20)' },
  { name: 'life-sqlite', with: 'e2e-sqlite', script: 'sqlite', child: 'store-life', what: 'SQLite (temp file, synchronous=FULL)' },
  { name: 'life-postgres', with: 'e2e-postgres', script: 'postgres', child: 'store-life', what: 'PostgreSQL (fresh schema, pool of 20)' },
] as const;

/**
 * Fair queues and priority (issue 26): each a script of bench/ run in a child (see
 * {@link scriptCase}), which prints its figures as the last JSON line on stdout.
 */
const FAIR_CASES = [
  { name: 'fairness-sqlite', script: 'fairness.ts', args: ['sqlite'], kind: 'fairness', storage: 'SQLite' },
  { name: 'fairness-postgres', script: 'fairness.ts', args: ['postgres'], kind: 'fairness', storage: 'PostgreSQL, two instances' },
  { name: 'priority-sqlite', script: 'fairness.ts', args: ['sqlite', '--priority'], kind: 'priority', storage: 'SQLite' },
  { name: 'claim-sqlite', script: 'claim-sqlite.ts', args: ['--claims-only'], kind: 'claim', storage: 'SQLite' },
  { name: 'claim-postgres', script: 'claim-postgres.ts', args: ['--claims-only'], kind: 'claim', storage: 'PostgreSQL' },
] as const;

const OTHER_CASES = ['e2e-simulator', 'e2e-sqlite', 'e2e-postgres', 'smpp-raw', 'smpp-raw-pinned', 'e2e-smpp', 'smpp-binds', 'count-sms', 'rss-sqlite', ...STORE_CASES.map((c) => c.name), ...FAIR_CASES.map((c) => c.name)] as const;

function selected(name: string): boolean {
  if (options.filter === null) return true;
  // `=name` selects that case alone; a plain value, every case whose name contains it.
  return options.filter.some((f) => (f.startsWith('=') ? name === f.slice(1) : name.includes(f)));
}

const httpSelected = HTTP_CASES.filter((c) => selected(c.name));
// A case's baseline always runs with it, so every ratio is within one run.
for (const c of [...httpSelected]) {
  const base = c.baseline === undefined ? undefined : HTTP_CASES.find((b) => b.name === c.baseline);
  if (base && !httpSelected.includes(base)) httpSelected.unshift(base);
}
httpSelected.sort((a, b) => HTTP_CASES.indexOf(a) - HTTP_CASES.indexOf(b));
const otherSelected = new Set<string>(OTHER_CASES.filter((c) => selected(c)));
if (otherSelected.has('e2e-smpp')) {
  otherSelected.add('smpp-raw');
  otherSelected.add('smpp-raw-pinned');
}
for (const store of STORE_CASES) {
  if (httpSelected.some((c) => c.name === store.with) || otherSelected.has(store.with)) otherSelected.add(store.name);
}

function log(line: string): void {
  const t = ((Date.now() - startedAt) / 1000).toFixed(0).padStart(4);
  process.stdout.write(`[${t}s] ${line}\n`);
}

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
    // Keys of their own per run: a fresh server, and the warm-up's keys are not the measured part's.
    const keys = (part: string) => (c.idempotencyKeys === true ? { idempotencyKeys: `${c.name}-${variant}-${part}` } : {});
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
async function compareHttp(): Promise<void> {
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
function casesOfRound(run: number): readonly HttpCase[] {
  return run % 2 === 1 ? httpSelected : [...httpSelected].reverse();
}

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
async function instructionCases(): Promise<void> {
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
        const keys = (part: string) => (c.idempotencyKeys === true ? { idempotencyKeys: `${c.name}-${run}-${part}` } : {});
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

function meanSd(values: readonly number[]): { mean: number; sd: number } {
  const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
  return { mean, sd: Math.sqrt(values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / values.length) };
}

/**
 * The HTTP throughput cases, interleaved run by run (baseline, memory, sqlite, ... then
 * the same backwards) so slow drift of the machine touches every case alike. Each run starts a fresh
 * server with fresh storage, warms it up, then measures.
 */
async function httpCases(): Promise<CaseResult[]> {
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

// ---------------------------------------------------------------------------------------
// End to end: HTTP accept -> carrier -> receipt -> delivery report at a local receiver

/** A delivery-report receiver on 127.0.0.1 that counts distinct reports by message_ref. */
class ReportReceiver {
  readonly server: Server;
  #seen = new Set<string>();
  #prefix = '';
  #target = 0;
  #waiter: (() => void) | null = null;
  posts = 0;

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.posts++;
        try {
          const report = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { message_ref?: string; external_id?: string } };
          const ref = report.data?.message_ref;
          if (ref !== undefined && (report.data?.external_id ?? '').startsWith(this.#prefix)) this.#seen.add(ref);
        } catch {
          // A malformed report is the router's bug, but it must not stop the count.
        }
        res.writeHead(204).end();
        if (this.#waiter && this.#seen.size >= this.#target) this.#waiter();
      });
    });
    this.server.keepAliveTimeout = 60_000;
  }

  async listen(): Promise<string> {
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done));
    const address = this.server.address();
    return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/dlr`;
  }

  /** Starts counting reports whose external_id starts with `prefix`. */
  expect(prefix: string, target: number): void {
    this.#seen = new Set();
    this.#prefix = prefix;
    this.#target = target;
  }

  get count(): number {
    return this.#seen.size;
  }

  /** Resolves when the target is reached or `deadlineMs` passes (then with false). */
  wait(deadlineMs: number): Promise<boolean> {
    if (this.#seen.size >= this.#target) return Promise.resolve(true);
    return new Promise((done) => {
      const timer = setTimeout(() => {
        this.#waiter = null;
        done(false);
      }, deadlineMs);
      this.#waiter = () => {
        clearTimeout(timer);
        this.#waiter = null;
        done(true);
      };
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((done) => this.server.close(() => done()));
  }
}

/** Posts `total` messages in 100-message requests, four requests at a time; returns how many were accepted. */
async function sendMessages(port: number, total: number, prefix: string, callbackUrl: string): Promise<number> {
  const perRequest = 100;
  let next = 0;
  let accepted = 0;
  const worker = async () => {
    while (next < total) {
      const count = Math.min(perRequest, total - next);
      const base = next;
      next += count;
      const body = sendBody(count, `${prefix}-${base}`, callbackUrl);
      const response = await fetch(`http://127.0.0.1:${port}${PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...HEADERS },
        body,
      });
      await response.arrayBuffer();
      if (response.ok) accepted += count;
      else throw new Error(`send answered ${response.status}`);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return accepted;
}

/** Per-run figures of an end-to-end case. */
interface E2eRun {
  perSec: number;
  cpu: number | null;
  peakMb: number | null;
  seconds: number;
}

const E2E_MESSAGES = options.quick ? 1_000 : 10_000;
const E2E_DEADLINE_MS = options.quick ? 30_000 : 60_000;
/**
 * Messages sent through, untimed, before each end-to-end run and each raw SMPP run, so both
 * are measured on optimised code. Each run is a fresh process: with a warm-up of 200, V8's
 * optimising compiler still took 28% of the router's core during the timed 5,000 (perf), and
 * the figure was half the steady one.
 */
const E2E_WARMUP = options.quick ? 1_000 : 10_000;

/** Runs the end-to-end case with the memory-storage router and `env`'s carrier. */
/** End to end through the router of `script` (its storage fresh for every run), with the carrier `env` selects. */
async function endToEnd(name: string, title: string, env: Record<string, string>, script: ServerScript = 'memory'): Promise<CaseResult> {
  const receiver = new ReportReceiver();
  const url = await receiver.listen();
  const result: E2eRun[] = [];
  const notes: string[] = [
    `N = ${E2E_MESSAGES.toLocaleString('en-US')} messages per run after ${E2E_WARMUP.toLocaleString('en-US')} untimed, 100 per request, 4 requests in flight`,
  ];
  try {
    for (let run = 1; run <= options.runs; run++) {
      const storage = await freshStorage(script);
      const server = await startServer(script, { ...env, ...storage.env });
      try {
        // Warm-up: a batch all the way through, which also proves the pipeline works.
        receiver.expect(`warm${run}`, E2E_WARMUP);
        await sendMessages(server.port, E2E_WARMUP, `warm${run}`, url);
        if (!(await receiver.wait(30_000))) {
          throw new SkipError(`warm-up: ${receiver.count}/${E2E_WARMUP} delivery reports within 30 s${server.stderr() ? `; server: ${server.stderr().split('\n').slice(-2).join(' / ')}` : ''}`);
        }
        resetPeakRss(server.pid);
        const prefix = `e2e${run}`;
        receiver.expect(prefix, E2E_MESSAGES);
        const cpu0 = cpuSeconds(server.pid);
        const t0 = performance.now();
        await sendMessages(server.port, E2E_MESSAGES, prefix, url);
        const acceptedAt = performance.now();
        const complete = await receiver.wait(E2E_DEADLINE_MS);
        const seconds = (performance.now() - t0) / 1000;
        const cpu1 = cpuSeconds(server.pid);
        const memory = rss(server.pid);
        const perSec = receiver.count / seconds;
        result.push({ perSec, cpu: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0, peakMb: memory?.peakMb ?? null, seconds });
        if (!complete) {
          notes.push(`run ${run}: only ${receiver.count}/${E2E_MESSAGES} reports within ${E2E_DEADLINE_MS / 1000} s (rate counts those); no further runs`);
        }
        log(
          `${name} run ${run}: ${Math.round(perSec)} msg/s end to end (${receiver.count}/${E2E_MESSAGES} reports in ${seconds.toFixed(2)} s; ` +
            `accepted in ${((acceptedAt - t0) / 1000).toFixed(2)} s), cpu ${result.at(-1)!.cpu?.toFixed(2) ?? '?'} s`,
        );
        // An incomplete run spent the whole deadline; more would only spend the budget again.
        if (!complete) break;
      } finally {
        await server.stop();
        await storage.cleanup();
      }
    }
  } catch (error) {
    const reason = error instanceof SkipError ? error.message : `failed: ${(error as Error).message}`;
    log(`${name}: skipped: ${reason}`);
    if (result.length === 0) return { name, title, skipped: reason, notes };
    notes.push(`later runs skipped: ${reason}`);
  } finally {
    await receiver.close();
  }
  const usPerMessage = spread(result.flatMap((r) => (r.cpu === null ? [] : [(r.cpu * 1e6) / E2E_MESSAGES])));
  if (usPerMessage !== null) notes.push(`the server's CPU per message: ${formatSpread(usPerMessage, (n) => String(Math.round(n)))} us`);
  return {
    name,
    title,
    notes,
    messagesPerSec: spread(result.map((r) => r.perSec)),
    cpuSec: spread(result.map((r) => r.cpu ?? NaN)),
    coreBusy: spread(result.map((r) => (r.cpu ?? NaN) / r.seconds)),
    peakRssMb: spread(result.map((r) => r.peakMb ?? NaN)),
  };
}

/** The SMPP section: the raw library rate (both ways), then the adapter end to end against the test SMSC. */
async function smppCases(): Promise<CaseResult[]> {
  const out: CaseResult[] = [];
  const rawTitle = 'raw `smpp` library, bench/smpp-raw.ts benchSmppRaw(): one transceiver bind, window 50, in the harness process on core 1 with its own test SMSC';
  const pinnedTitle = 'raw `smpp` library, bench/servers/smpp-raw.ts: one transceiver bind, window 50, a child pinned to core 0 like the router, against the same test SMSC as e2e-smpp';
  const e2eTitle = 'end to end with the SMPP adapter (memory storage) against the test SMSC: HTTP accept to delivery report received';
  if (otherSelected.has('smpp-raw')) {
    if (!existsSync(join(root, 'bench', 'smpp-raw.ts'))) out.push({ name: 'smpp-raw', title: rawTitle, skipped: 'bench/smpp-raw.ts not there yet', notes: [] });
    else {
      try {
        const { benchSmppRaw } = (await import('./smpp-raw.js')) as typeof import('./smpp-raw.js');
        const rates: number[] = [];
        for (let run = 1; run <= options.runs; run++) {
          const r = await benchSmppRaw({ messages: E2E_MESSAGES, warmup: E2E_WARMUP, deadlineMs: E2E_DEADLINE_MS });
          rates.push(r.receiptsPerSec);
          log(`smpp-raw run ${run}: ${r.receiptsPerSec} receipts/s (${r.submitsPerSec} submits/s, median response ${r.medianResponseMs} ms)`);
        }
        out.push({ name: 'smpp-raw', title: rawTitle, messagesPerSec: spread(rates), notes: [`N = ${E2E_MESSAGES.toLocaleString('en-US')} per run after ${E2E_WARMUP.toLocaleString('en-US')} untimed; msg/s = receipts/s`] });
      } catch (error) {
        out.push({ name: 'smpp-raw', title: rawTitle, skipped: `bench/smpp-raw.ts failed: ${(error as Error).message}`, notes: [] });
      }
    }
  }
  if (!otherSelected.has('smpp-raw-pinned') && !otherSelected.has('e2e-smpp')) return out;
  if (!existsSync(join(root, 'src', 'smpp.ts')) || !existsSync(join(root, 'test', 'fixtures', 'smsc.ts'))) {
    const reason = 'SMPP adapter (src/smpp.ts) or test SMSC (test/fixtures/smsc.ts) not there yet';
    if (otherSelected.has('smpp-raw-pinned')) out.push({ name: 'smpp-raw-pinned', title: pinnedTitle, skipped: reason, notes: [] });
    if (otherSelected.has('e2e-smpp')) out.push({ name: 'e2e-smpp', title: e2eTitle, skipped: reason, notes: [] });
    return out;
  }
  const fixture = pathToFileURL(join(root, 'test', 'fixtures', 'smsc.ts')).href;
  const { startSmsc } = (await import(fixture)) as typeof import('../test/fixtures/smsc.js');
  // Quiet: a JSON line per submit and per receipt, parsed here on core 1, would make the
  // SMSC (not the client under test) the bound of both the raw rate and e2e-smpp.
  const smsc = await startSmsc({ password: 'secret', quiet: true });
  try {
    await smsc.send({ cmd: 'set', receiptMode: 'auto' });
    if (otherSelected.has('smpp-raw-pinned')) {
      const raw: number[] = [];
      const cpus: number[] = [];
      const busy: number[] = [];
      const notes = [`N = ${E2E_MESSAGES.toLocaleString('en-US')} submit_sm per run after ${E2E_WARMUP.toLocaleString('en-US')} untimed; msg/s = receipts/s`];
      let reason: string | null = null;
      for (let run = 1; run <= options.runs && reason === null; run++) {
        const rate = await rawSmpp(smsc.port).catch((error: unknown) => {
          reason = error instanceof SkipError ? error.message : String(error);
          return null;
        });
        if (rate !== null) {
          raw.push(rate.perSec);
          cpus.push(rate.cpuSec);
          busy.push(rate.cpuSec / rate.seconds);
          if (rate.receipts < E2E_MESSAGES) notes.push(`run ${run}: ${rate.receipts}/${E2E_MESSAGES} receipts before the deadline`);
          log(`smpp-raw-pinned run ${run}: ${Math.round(rate.perSec)} msg/s (${rate.receipts} receipts in ${rate.seconds.toFixed(2)} s), client core ${Math.round((100 * rate.cpuSec) / rate.seconds)}% busy`);
        }
      }
      if (raw.length === 0) out.push({ name: 'smpp-raw-pinned', title: pinnedTitle, skipped: reason ?? 'no run', notes });
      else {
        const usPerMessage = spread(cpus.map((cpu) => (cpu * 1e6) / E2E_MESSAGES))!;
        notes.push(`the client's CPU per message: ${formatSpread(usPerMessage, (n) => String(Math.round(n)))} us`);
        out.push({ name: 'smpp-raw-pinned', title: pinnedTitle, messagesPerSec: spread(raw), cpuSec: spread(cpus), coreBusy: spread(busy), notes });
      }
    }
    if (otherSelected.has('e2e-smpp')) {
      out.push(await endToEnd('e2e-smpp', e2eTitle, { BENCH_SMPP_URL: `smpp://bench:secret@127.0.0.1:${smsc.port}` }));
    }
  } finally {
    await smsc.stop();
  }
  return out;
}

/**
 * Runs `script` once, pinned to the server core, and resolves with the JSON line it prints
 * when its event is `done`; any other event (`error`, with a message) or an exit without a
 * line skips the case.
 */
async function runPinnedOnce<T>(script: ServerScript, env: Record<string, string>): Promise<T> {
  const [command, args] = pinnedCommand(script);
  const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((done, fail) => {
    let answered = false;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const event = JSON.parse(line) as { event: string; message?: string };
      answered = true;
      if (event.event === 'done') done(event as T);
      else fail(new SkipError(`${script}: ${event.message ?? line}`));
    });
    child.once('exit', (code) => {
      if (!answered) fail(new SkipError(`${script} exited with ${code} and no result`));
    });
  });
}

/** One run of the raw SMPP client child. */
async function rawSmpp(port: number): Promise<{ perSec: number; receipts: number; seconds: number; cpuSec: number }> {
  const env = { BENCH_SMPP_PORT: String(port), BENCH_MESSAGES: String(E2E_MESSAGES), BENCH_WARMUP: String(E2E_WARMUP), BENCH_DEADLINE_MS: String(E2E_DEADLINE_MS) };
  const event = await runPinnedOnce<{ receipts: number; seconds: number; cpuSec: number }>('smpp-raw', env);
  return { perSec: event.receipts / event.seconds, receipts: event.receipts, seconds: event.seconds, cpuSec: event.cpuSec };
}

// ---------------------------------------------------------------------------------------
// The storage alone

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
async function storeCase(store: (typeof STORE_CASES)[number]): Promise<CaseResult> {
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

// ---------------------------------------------------------------------------------------
// Fair queues and priority (issue 26)

/** What bench/fairness.ts prints. */
interface FairnessFigures {
  instances: number;
  tpsPerBind: number;
  otpSubmitted: number;
  otpDelayMedianMs: number;
  otpDelayMaxMs: number;
  bulkDrainPerSecond: number;
  drainRatio: number;
  /** `--priority` only. */
  bulkHandedBeforeEach?: number[];
  bulkHandedBeforeMax?: number;
  bulkAtCarrierBeforeEach?: number[];
  bulkAtCarrierBeforeMax?: number;
  bulkSubmittedEventsBeforeMax?: number;
  carrierSlotsPerInstance?: number;
}

/** What bench/claim-sqlite.ts and claim-postgres.ts print. */
interface ClaimFigures {
  claims: number;
  manyKeys: { keys: number; medianMs: number; p90Ms: number; keysPerClaim: number; selectionMedianMs?: number };
  oneKey: { keys: number; medianMs: number; p90Ms: number; keysPerClaim: number; selectionMedianMs?: number };
  ratio: number;
  selectionRatio?: number;
}

/** The OTP requests bench/fairness.ts sends. */
const FAIR_OTP_REQUESTS = 10;
/** The carrier's submits a second in bench/fairness.ts, over all binds. */
const FAIR_TPS = 200;
/** Each run of a fair-queue script must end within this, or the case is skipped. */
const FAIR_SCRIPT_DEADLINE_MS = 150_000;

/** Each run's figures of the fair-queue cases that ran, by case name, for the targets. */
const fairRuns = new Map<string, (FairnessFigures | ClaimFigures)[]>();

/**
 * Runs `npx tsx bench/<script> <args>` once in a child pinned to the server core (its SMSC
 * child, if any, with it) and resolves with the last JSON line it prints on stdout. Its
 * human output (stderr) is kept for the error of a failed run.
 */
async function runScriptOnce<T>(script: string, args: readonly string[]): Promise<T> {
  const [command, ...prefix] = [...pinning.server, process.execPath];
  const child = spawn(command!, [...prefix, '--import', 'tsx', join(root, 'bench', script), ...args], { cwd: root, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let last: string | null = null;
  const errLines: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('{')) last = line;
  });
  createInterface({ input: child.stderr! }).on('line', (line) => {
    errLines.push(line);
    if (errLines.length > 20) errLines.shift();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), FAIR_SCRIPT_DEADLINE_MS);
  const code = await new Promise<number | null>((done) => child.once('exit', (exitCode) => done(exitCode)));
  clearTimeout(timer);
  if (code !== 0 || last === null) {
    const why = child.signalCode === 'SIGKILL' ? `did not end within ${FAIR_SCRIPT_DEADLINE_MS / 1000} s` : `exited with ${code}`;
    throw new SkipError(`bench/${script} ${args.join(' ')} ${why}${last === null ? ' and no result' : ''}: ${errLines.filter((l) => l.trim() !== '').slice(-3).join(' / ')}`);
  }
  return JSON.parse(last) as T;
}

const FAIR_TITLES: Record<(typeof FAIR_CASES)[number]['kind'], (storage: string) => string> = {
  fairness: (storage) =>
    `${storage}: key A queues 10,000 messages in 100-message requests, then key B sends ten 1-message requests at 4/s; the test SMSC takes ${FAIR_TPS} submits/s${storage.includes('two') ? ' (two router instances on one schema, a bind of 100/s each)' : ' (one bind)'}; msg/s = the bulk drain while B sends, p50 = B's accept-to-submitted delay (bench/fairness.ts)`,
  priority: (storage) =>
    `${storage}: fairness-sqlite with B's profile \`priority: 'transactional'\` and A's bulk: how many of A's messages (all queued before B's) the worker hands to the carrier between a transactional message's acceptance and its own hand-over (bench/fairness.ts --priority)`,
  claim: (storage) =>
    `${storage}: one claim of 256 with 1,000,000 messages queued over 1,000 keys, against 1 key; 30 claims each after 3, median (bench/claim-${storage === 'SQLite' ? 'sqlite' : 'postgres'}.ts --claims-only); p50 = the 1,000-key claim`,
};

/** Runs of one fair-queue script (a fresh child, storage and SMSC per run). */
async function scriptCase(c: (typeof FAIR_CASES)[number]): Promise<CaseResult> {
  const title = FAIR_TITLES[c.kind](c.storage);
  if (c.storage.startsWith('PostgreSQL')) {
    const problem = await postgresProblem();
    if (problem !== null) return { name: c.name, title, skipped: problem, notes: [] };
  }
  // The claim scripts load 2,000,000 messages for one figure of 30 claims each: one run.
  const runs = c.kind === 'claim' ? 1 : options.runs;
  const results: (FairnessFigures | ClaimFigures)[] = [];
  for (let run = 1; run <= runs; run++) {
    const started = Date.now();
    try {
      const r = await runScriptOnce<FairnessFigures | ClaimFigures>(c.script, c.args);
      results.push(r);
      const took = `${Math.round((Date.now() - started) / 1000)} s`;
      if ('ratio' in r) log(`${c.name} run ${run}: claim ${r.manyKeys.medianMs.toFixed(2)} ms over 1,000 keys, ${r.oneKey.medianMs.toFixed(2)} ms over 1 key, ${r.ratio.toFixed(2)}x (${took})`);
      else {
        const priority =
          r.bulkHandedBeforeMax === undefined
            ? ''
            : `, bulk handed to the carrier after a transactional message's acceptance and before it: max ${r.bulkHandedBeforeMax}; received by the SMSC meanwhile: max ${r.bulkAtCarrierBeforeMax} (slots ${r.carrierSlotsPerInstance})`;
        log(`${c.name} run ${run}: B's delay median ${r.otpDelayMedianMs} ms, max ${r.otpDelayMaxMs} ms (${r.otpSubmitted}/${FAIR_OTP_REQUESTS} submitted), drain ${r.bulkDrainPerSecond} msg/s (${r.drainRatio}x)${priority} (${took})`);
      }
    } catch (error) {
      const reason = error instanceof SkipError ? error.message : `failed: ${(error as Error).message}`;
      log(`${c.name} run ${run}: skipped: ${reason}`);
      if (results.length === 0) return { name: c.name, title, skipped: reason, notes: [] };
      break;
    }
  }
  fairRuns.set(c.name, results);
  const notes: string[] = [`${results.length} run(s), each a fresh child pinned to core 0 with fresh storage`];
  if (c.kind === 'claim') {
    const r = results[0] as ClaimFigures;
    notes.push(
      `1,000 keys: median ${r.manyKeys.medianMs.toFixed(2)} ms, p90 ${r.manyKeys.p90Ms.toFixed(2)} ms (${r.manyKeys.keysPerClaim} keys a claim); 1 key: median ${r.oneKey.medianMs.toFixed(2)} ms, p90 ${r.oneKey.p90Ms.toFixed(2)} ms; ratio ${times(r.ratio)}` +
        (r.selectionRatio === undefined ? '' : `; the selection alone ${r.manyKeys.selectionMedianMs!.toFixed(2)} vs ${r.oneKey.selectionMedianMs!.toFixed(2)} ms (${times(r.selectionRatio)})`),
    );
    return { name: c.name, title, p50Ms: spread([r.manyKeys.medianMs]), notes };
  }
  const f = results as FairnessFigures[];
  notes.push(`B's delay max ${Math.max(...f.map((r) => r.otpDelayMaxMs))} ms (worst run), ${f.map((r) => r.otpSubmitted).join('/')} of ${FAIR_OTP_REQUESTS} submitted`);
  if (c.kind === 'priority') {
    const each = (key: 'bulkHandedBeforeEach' | 'bulkAtCarrierBeforeEach') => f.map((r) => (r[key] ?? []).join(',')).join(' | ');
    notes.push(`bulk parts the worker handed to the carrier between a transactional message's acceptance and its own hand-over, each message by run: ${each('bulkHandedBeforeEach')}`);
    notes.push(`bulk parts the SMSC received meanwhile (those handed over before, up to the ${f[0]!.carrierSlotsPerInstance} carrier slots, included): ${each('bulkAtCarrierBeforeEach')}`);
  }
  return {
    name: c.name,
    title,
    messagesPerSec: spread(f.map((r) => r.bulkDrainPerSecond)),
    p50Ms: spread(f.map((r) => r.otpDelayMedianMs)),
    notes,
  };
}

// ---------------------------------------------------------------------------------------
// countSms and RSS

/**
 * Several binds to one SMSC (bench/smpp-binds.ts): SmppDelivery's submit rate with 4 binds,
 * and with 1 in the same runs, against an SMSC answering 20 ms late with a window of 10 per
 * bind, so one bind is bounded by its window (500 a second) and each bind adds as much.
 */
async function smppBindsCase(): Promise<CaseResult> {
  const title = 'SmppDelivery with 4 binds to one SMSC (bench/smpp-binds.ts benchSmppBinds()): submits/s, the SMSC answering 20 ms late, window 10 per bind';
  const messages = options.quick ? 1_000 : 4_000;
  const four: number[] = [];
  const one: number[] = [];
  try {
    const { benchSmppBinds } = (await import('./smpp-binds.js')) as typeof import('./smpp-binds.js');
    for (let run = 1; run <= options.runs; run++) {
      const single = await benchSmppBinds({ binds: 1, messages });
      const several = await benchSmppBinds({ binds: 4, messages });
      one.push(single.submitsPerSec);
      four.push(several.submitsPerSec);
      log(`smpp-binds run ${run}: 4 binds ${several.submitsPerSec} submits/s, 1 bind ${single.submitsPerSec} submits/s (${(several.submitsPerSec / single.submitsPerSec).toFixed(1)}x)`);
    }
  } catch (error) {
    return { name: 'smpp-binds', title, skipped: `bench/smpp-binds.ts failed: ${(error as Error).message}`, notes: [] };
  }
  const oneMedian = spread(one)!.median;
  const fourSpread = spread(four)!;
  return {
    name: 'smpp-binds',
    title,
    messagesPerSec: fourSpread,
    notes: [`N = ${messages.toLocaleString('en-US')} parts per run; 1 bind in the same runs: ${Math.round(oneMedian).toLocaleString('en-US')} submits/s (4 binds ${times(fourSpread.median / oneMedian)}); the window bounds one bind at 500/s`],
  };
}

async function countSmsCase(): Promise<CaseResult> {
  const title = 'countSms over 100,000 mixed messages (bench/count-sms.ts benchCountSms(), each run a fresh child pinned to core 0 like the servers)';
  const passes = options.quick ? 3 : 5;
  const rates: number[] = [];
  const naive: number[] = [];
  let naivePasses = 0;
  for (let run = 1; run <= options.runs; run++) {
    try {
      const r = await runPinnedOnce<CountSmsBenchResult>('count-sms', { BENCH_RUNS: String(passes) });
      rates.push(r.countSmsPerSec);
      naive.push(r.baselinePerSec);
      naivePasses = r.baselineRuns;
      log(`count-sms run ${run}: ${Math.round(r.countSmsPerSec)} msg/s (naive counter ${Math.round(r.baselinePerSec)} msg/s, ${r.speedup.toFixed(1)}x)`);
    } catch (error) {
      return { name: 'count-sms', title, skipped: error instanceof SkipError ? error.message : `failed: ${(error as Error).message}`, notes: [] };
    }
  }
  const counted = spread(rates)!;
  const naiveMedian = spread(naive)!.median;
  return {
    name: 'count-sms',
    title,
    messagesPerSec: counted,
    notes: [`each run: the median of ${passes} timed passes after ${COUNT_SMS_WARMUPS} untimed; naive counter in the same runs (the median of ${naivePasses} timed passes after ${NAIVE_WARMUPS} untimed): ${Math.round(naiveMedian).toLocaleString('en-US')} msg/s (countSms ${(counted.median / naiveMedian).toFixed(1)}x)`],
  };
}

const RSS_TARGET = 1_000_000;
const RSS_MESSAGES = options.quick ? 20_000 : RSS_TARGET;
const RSS_DEADLINE_MS = options.quick ? 30_000 : 90_000;

/** Accepts up to N messages on one SQLite server (100 per request), then reads its RSS. */
async function rssCase(): Promise<{ result: CaseResult; accepted: number; rssMb: number | null }> {
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

// ---------------------------------------------------------------------------------------
// Machine

/** Share of all cores busy over `ms`, from /proc/stat: other work on the machine. */
async function machineBusy(ms: number): Promise<number | null> {
  const sample = () => {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
    const idle = line[3]! + (line[4] ?? 0);
    return { idle, total: line.reduce((a, b) => a + b, 0) };
  };
  try {
    const a = sample();
    await new Promise((done) => setTimeout(done, ms));
    const b = sample();
    return 1 - (b.idle - a.idle) / (b.total - a.total);
  } catch {
    return null;
  }
}

function machine(): string[] {
  let model = cpus()[0]?.model ?? 'unknown';
  try {
    model = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? model;
  } catch {
    // Not Linux: os.cpus() named it.
  }
  return [
    `CPU: ${model}, ${cores} cores`,
    `memory: ${(totalmem() / 2 ** 30).toFixed(1)} GiB (${(freemem() / 2 ** 30).toFixed(1)} GiB free at start)`,
    `Node ${process.version}, ${process.platform} ${process.arch}`,
    `load average at start: ${loadavg().map((n) => n.toFixed(2)).join(' ')}`,
  ];
}

// ---------------------------------------------------------------------------------------
// Targets and limits

function verdicts(cases: CaseResult[], rssOutcome: { accepted: number; rssMb: number | null } | null): TargetVerdict[] {
  const get = (name: string) => cases.find((c) => c.name === name);
  const median = (c: CaseResult | undefined, key: 'requestsPerSec' | 'messagesPerSec' | 'p99Ms' | 'cpuSec') => c?.[key]?.median ?? null;
  const why = (c: CaseResult | undefined, name: string) => (c === undefined ? `${name} not run (filtered out)` : c.skipped !== undefined ? `${name} skipped: ${c.skipped}` : `${name} has no figure`);
  const list: TargetVerdict[] = [];
  // Ratios are taken round by round (caseRatio): the verdict goes by their median, and the
  // text gives their range and the two cases' medians beside it.
  const ratioTarget = (target: string, name: string, baseName: string, key: 'requestsPerSec' | 'p99Ms', want: (r: number) => boolean) => {
    const c = get(name);
    const b = get(baseName);
    const r = caseRatio(c, b, key);
    const v = median(c, key);
    const bv = median(b, key);
    if (r === null || v === null || bv === null) {
      list.push({ target, measured: v === null ? why(c, name) : why(b, baseName), verdict: 'not measured' });
      return;
    }
    const unit = key === 'p99Ms' ? 'ms p99' : 'req/s';
    const digits = key === 'p99Ms' ? 1 : 0;
    list.push({ target, measured: `${formatSpread(r, times)}${r.runs > 1 ? ' by round' : ''} (medians ${v.toFixed(digits)} vs ${bv.toFixed(digits)} ${unit})`, verdict: want(r.median) ? 'met' : 'not met' });
  };
  /** `ceiling`: a case measuring what bounds this one (the storage alone), shown beside it; or `beside`, any such text. */
  const absTarget = (target: string, name: string, min: number, ceiling?: string, besideText?: string) => {
    const c = get(name);
    const v = median(c, 'messagesPerSec');
    const bound = ceiling === undefined ? null : median(get(ceiling), 'messagesPerSec');
    const beside = bound === null ? (besideText === undefined ? '' : ` (${besideText})`) : ` (the storage alone, ${ceiling}: ${Math.round(bound).toLocaleString('en-US')} msg/s)`;
    if (v === null) list.push({ target, measured: why(c, name), verdict: 'not measured' });
    else list.push({ target, measured: `${Math.round(v).toLocaleString('en-US')} msg/s${beside}`, verdict: v >= min ? 'met' : 'not met' });
  };
  ratioTarget('quick send, 1 msg, memory: >= 0.9x baseline req/s', 'memory-1', 'baseline-1', 'requestsPerSec', (r) => r >= 0.9);
  ratioTarget('quick send, 1 msg, memory: p99 <= 1.2x baseline', 'memory-1', 'baseline-1', 'p99Ms', (r) => r <= 1.2);
  {
    // Issue 6: the three limiters (failed-auth check, per-key request limit, message budget).
    const target = 'rate limiters add < 5% to quick send, 1 msg, memory (req/s with vs without)';
    const on = median(get('memory-1'), 'requestsPerSec');
    const off = median(get('memory-1-nolimits'), 'requestsPerSec');
    const r = caseRatio(get('memory-1'), get('memory-1-nolimits'), 'requestsPerSec');
    if (r === null || on === null || off === null) list.push({ target, measured: on === null ? why(get('memory-1'), 'memory-1') : why(get('memory-1-nolimits'), 'memory-1-nolimits'), verdict: 'not measured' });
    else {
      // The cost is 1 - (with / without), round by round: its median, and its range.
      const cost = (x: number) => `${((1 - x) * 100).toFixed(1)}%`;
      const range = r.runs > 1 ? ` [${cost(r.max)} to ${cost(r.min)} by round]` : '';
      list.push({ target, measured: `${cost(r.median)}${range} (medians ${Math.round(on)} vs ${Math.round(off)} req/s)`, verdict: 1 - r.median < 0.05 ? 'met' : 'not met' });
    }
  }
  {
    // Issue 30: the Idempotency-Key header (a lookup, a hash, a record stored with the message).
    const on = median(get(IDEMPOTENCY_CASE.name), 'requestsPerSec');
    const off = median(get('memory-1'), 'requestsPerSec');
    const r = caseRatio(get(IDEMPOTENCY_CASE.name), get('memory-1'), 'requestsPerSec');
    if (r === null || on === null || off === null) list.push({ target: IDEMPOTENCY_TARGET, measured: on === null ? why(get(IDEMPOTENCY_CASE.name), IDEMPOTENCY_CASE.name) : why(get('memory-1'), 'memory-1'), verdict: 'not measured' });
    else {
      const cost = (x: number) => `${((1 - x) * 100).toFixed(1)}%`;
      const range = r.runs > 1 ? ` [${cost(r.max)} to ${cost(r.min)} by round]` : '';
      list.push({ target: IDEMPOTENCY_TARGET, measured: `${cost(r.median)}${range} (medians ${Math.round(on)} vs ${Math.round(off)} req/s)`, verdict: 1 - r.median < 0.05 ? 'met' : 'not met' });
    }
  }

  ratioTarget('quick send, 1 msg, SQLite: >= 0.8x baseline req/s', 'sqlite-1', 'baseline-1', 'requestsPerSec', (r) => r >= 0.8);
  absTarget('100 msgs/request, SQLite: >= 100,000 msg/s', 'sqlite-100', 100_000, 'store-sqlite-100');
  absTarget('100 msgs/request, PostgreSQL: >= 50,000 msg/s', 'postgres-100', 50_000, 'store-postgres-100');
  {
    // What 5,000 msg/s leaves per message on this core, against what the library alone takes.
    const usPerMessage = (name: string) => {
      const cpu = median(get(name), 'cpuSec');
      return cpu === null ? null : Math.round((cpu * 1e6) / E2E_MESSAGES);
    };
    const raw = usPerMessage('smpp-raw-pinned');
    const gateway = usPerMessage('e2e-smpp');
    const beside = raw === null || gateway === null ? undefined : `CPU per message: the gateway ${gateway} us, the raw client alone ${raw} us; 5,000 msg/s leaves 200`;
    absTarget('end to end, SMPP: >= 5,000 msg/s', 'e2e-smpp', 5_000, undefined, beside);
  }
  {
    // Compared with the faster of the two raw figures, so the verdict is never flattered
    // by a raw client that shared its core with the SMSC.
    const e = get('e2e-smpp');
    const v = median(e, 'messagesPerSec');
    const raws = ['smpp-raw', 'smpp-raw-pinned'].map((n) => ({ n, v: median(get(n), 'messagesPerSec') })).filter((r) => r.v !== null && r.v > 0);
    const best = raws.sort((a, b) => b.v! - a.v!)[0];
    const target = 'end to end, SMPP: >= 0.5x raw smpp library';
    if (v === null || best === undefined) list.push({ target, measured: v === null ? why(e, 'e2e-smpp') : why(get('smpp-raw-pinned'), 'smpp-raw-pinned'), verdict: 'not measured' });
    else list.push({ target, measured: `${(v / best.v!).toFixed(2)}x (${Math.round(v)} vs ${Math.round(best.v!)} msg/s of ${best.n})`, verdict: v / best.v! >= 0.5 ? 'met' : 'not met' });
  }
  {
    const target = 'RSS < 200 MB after 1,000,000 messages on SQLite';
    const c = get('rss-sqlite');
    if (!rssOutcome || rssOutcome.rssMb === null) list.push({ target, measured: why(c, 'rss-sqlite'), verdict: 'not measured' });
    else {
      const measured = `${rssOutcome.rssMb.toFixed(0)} MiB after ${rssOutcome.accepted.toLocaleString('en-US')} messages`;
      if (rssOutcome.accepted < RSS_TARGET) {
        list.push({ target, measured: `${measured} (fewer than 1,000,000 within the time bound)`, verdict: rssOutcome.rssMb >= 200 ? 'not met' : 'not measured' });
      } else list.push({ target, measured, verdict: rssOutcome.rssMb * 1.048576 < 200 ? 'met' : 'not met' });
    }
  }
  absTarget('countSms: >= 1,000,000 msg/s', 'count-sms', 1_000_000);
  fairTargets(cases, list, why);
  return list;
}

/** Issue 26's targets: B's delay and the drain beside a campaign, claims over many keys, priority. */
function fairTargets(cases: CaseResult[], list: TargetVerdict[], why: (c: CaseResult | undefined, name: string) => string): void {
  const figures = <T,>(name: string): T[] | null => {
    const runs = fairRuns.get(name);
    return runs === undefined || runs.length === 0 ? null : (runs as T[]);
  };
  const notMeasured = (target: string, name: string) => list.push({ target, measured: why(cases.find((c) => c.name === name), name), verdict: 'not measured' });
  const mid = (values: number[]) => spread(values)!;
  const ranged = (values: number[], format: (n: number) => string) => `${formatSpread(mid(values), format)}${values.length > 1 ? ` over ${values.length} runs` : ''}`;
  for (const [name, storage] of [
    ['fairness-sqlite', 'SQLite'],
    ['fairness-postgres', 'PostgreSQL, two instances'],
  ] as const) {
    const delayTarget = `fairness, ${storage}: B's accept-to-submitted delay behind a 10,000-message campaign: median <= 100 ms, max <= 500 ms`;
    const drainTarget = `fairness, ${storage}: the campaign drains at >= 0.95x of the carrier's ${FAIR_TPS}/s meanwhile`;
    const runs = figures<FairnessFigures>(name);
    if (runs === null) {
      notMeasured(delayTarget, name);
      notMeasured(drainTarget, name);
      continue;
    }
    const allSent = runs.every((r) => r.otpSubmitted === FAIR_OTP_REQUESTS);
    const median = mid(runs.map((r) => r.otpDelayMedianMs)).median;
    const max = Math.max(...runs.map((r) => r.otpDelayMaxMs));
    list.push({
      target: delayTarget,
      measured: `median ${ranged(runs.map((r) => r.otpDelayMedianMs), (n) => `${Math.round(n)} ms`)}, max ${Math.round(max)} ms (worst run)${allSent ? '' : `; only ${runs.map((r) => r.otpSubmitted).join('/')} of ${FAIR_OTP_REQUESTS} submitted within 60 s`}`,
      verdict: allSent && median <= 100 && max <= 500 ? 'met' : 'not met',
    });
    const ratio = mid(runs.map((r) => r.drainRatio));
    list.push({
      target: drainTarget,
      measured: `${formatSpread(ratio, times)}${runs.length > 1 ? ` over ${runs.length} runs` : ''} (${formatSpread(mid(runs.map((r) => r.bulkDrainPerSecond)), (n) => String(Math.round(n)))} msg/s)`,
      verdict: ratio.median >= 0.95 ? 'met' : 'not met',
    });
  }
  for (const [name, storage] of [
    ['claim-sqlite', 'SQLite'],
    ['claim-postgres', 'PostgreSQL'],
  ] as const) {
    const target = `claim of 256 with 1,000,000 queued, ${storage}: over 1,000 keys <= 2x over 1 key`;
    const runs = figures<ClaimFigures>(name);
    if (runs === null) {
      notMeasured(target, name);
      continue;
    }
    const r = runs[0]!;
    list.push({ target, measured: `${times(r.ratio)} (medians ${r.manyKeys.medianMs.toFixed(2)} vs ${r.oneKey.medianMs.toFixed(2)} ms)`, verdict: r.ratio <= 2 ? 'met' : 'not met' });
  }
  {
    const name = 'priority-sqlite';
    const target = 'priority, SQLite: a transactional message waits for no bulk message queued before it, beyond those already handed to the carrier when it was accepted: 0';
    const runs = figures<FairnessFigures>(name);
    if (runs === null) notMeasured(target, name);
    else {
      const slots = runs[0]!.carrierSlotsPerInstance ?? 0;
      const worst = Math.max(...runs.map((r) => r.bulkHandedBeforeMax ?? Number.POSITIVE_INFINITY));
      const atCarrier = Math.max(...runs.map((r) => r.bulkAtCarrierBeforeMax ?? Number.POSITIVE_INFINITY));
      const allSent = runs.every((r) => r.otpSubmitted === FAIR_OTP_REQUESTS);
      list.push({
        target,
        measured:
          `at most ${worst} bulk parts handed to the carrier between a transactional message's acceptance and its own (worst of ${runs.length} run(s)); ` +
          `the SMSC received at most ${atCarrier} meanwhile, those already at the ${slots} carrier slots included; its delay median ${ranged(runs.map((r) => r.otpDelayMedianMs), (n) => `${Math.round(n)} ms`)}${allSent ? '' : ', not all submitted'}`,
        verdict: allSent && worst === 0 ? 'met' : 'not met',
      });
    }
  }
}

/** What limits each figure: fixed knowledge of the setup plus what this run's CPU figures show. */
function limits(cases: CaseResult[]): string[] {
  const lines = [
    `All HTTP cases: one pinned server core against one load-generator core; autocannon (${options.connections === null ? '16 connections for 1-message bodies, 8 for 100-message bodies' : `${options.connections} connections for every case, set by --connections`}, no pipelining) shares core 1 with nothing else. Where "server core busy" is near 100% the figure is the server's CPU; well below 100% means the server waited (disk sync, database, or the load generator).`,
    'baseline-*: Express 5 routing, express.json() and res.json() on one core - the ceiling any Express middleware can reach.',
    'memory-* / sqlite-* / postgres-*: the router\'s request path (key check, body parse, ajv validation, countSms, storage insert, response) plus its worker submitting to the simulator on the same core, as in production: the worker competes with requests for the one core.',
    'sqlite-*: each request is one transaction; with the default synchronous=FULL every commit waits for fsync of the WAL, so disk latency bounds req/s when the core is not saturated.',
    'postgres-*: each request is one transaction over TCP to the local PostgreSQL server, which runs unpinned and may share core 0 with the router; its commit (WAL flush) and round trips bound the figure.',
    'e2e-*: time from the first send request to the last delivery report received; bounded by the worker (64 submissions at the carrier, 256 messages held, 250 ms idle poll), the carrier round trip, and the dispatcher (64 reports in flight, 32 per receiver host in the bench router, default 8: the single local receiver is one host), all on the server core.',
    'e2e-sqlite / e2e-postgres: the same through a durable storage, where every step of a message (insert, submission, receipt, report attempt) is committed on its way: the rate the gateway sustains with that storage; PostgreSQL runs unpinned on the same two cores.',
    'smpp-raw / smpp-raw-pinned: the `smpp` library with a window of 50 and no storage; against the quiet test SMSC (a child on core 1 that prints nothing per message: a line per message, parsed by the harness, would cap the raw rate near 3,900 msg/s). smpp-raw runs the client in the harness on core 1 beside its own SMSC, so the two share that core; smpp-raw-pinned runs it on core 0 as the router runs, and its CPU per message (beside the case) is the library\'s own cost on that core with its texts given as strings (the adapter hands it encoded bytes and writes a turn\'s PDUs at once); the SMPP ratio target uses the faster of the two. e2e-smpp\'s CPU per message, beside it, is the whole gateway\'s: request, storage, worker, the SMPP exchange and the report\'s POST.',
    'store-*-100: the storage adapter alone in a child pinned to core 0, storing what sqlite-100 / postgres-100 store (100-message batches, 8 at a time) with nothing else in the process: the most those cases could accept on that storage if the request path and the worker cost nothing. SQLite\'s figure is its inserts (every message row, its ref, its reference and its claim index entries) and its commits, each waiting for fsync; PostgreSQL\'s is the server, unpinned, inserting the rows.',
    'life-*: the storage adapter alone in a child pinned to core 0, taking messages through the storage calls of their lives as the router and its worker make them (stored leased to the instance, submissions, receipts storing the report leased to the instance (no claim, as the router does), the attempt recorded), 100 at a time from 8 callers: the most e2e-sqlite / e2e-postgres could finish on that storage if HTTP, the carrier and the reports\' POSTs cost nothing. PostgreSQL runs unpinned; its CPU per message (all its processes, from /proc) is beside the case.',
    'count-sms: pure CPU in a fresh child pinned to core 0 while core 1 idles; the corpus is 100,000 deterministic mixed GSM-7/UCS-2 texts of 1-5 parts. A fresh child gives a steadier figure than the harness process, where the same code measured 0.6-1.4M msg/s depending on what ran before it.',
    `fairness-* / priority-sqlite: the router (or, on PostgreSQL, two routers on one schema in one process), the HTTP client and the test SMSC child, all pinned to core 0, run with tsx; the carrier's ${FAIR_TPS} submits a second bound the drain (the adapter paces its bind), and B's delay is the wait for a carrier slot plus the claim, the submit and its recording. priority-sqlite's SMSC reports every submit so that the order the carrier received them in is counted where it happened.`,
    'claim-*: the storage alone in a child pinned to core 0 (PostgreSQL unpinned), synchronous=FULL for SQLite; the figure is the wall time of one claim (select, lease, read the records), so disk and, for PostgreSQL, the server and its round trips bound it. One run: loading the two backlogs of 1,000,000 takes most of the case.',
    'rss-sqlite: RSS (VmRSS) of the server read right after the last accepted request; the worker is still draining the backlog, so RSS includes its in-flight state. Its req/s is coarse: autocannon notices that a fixed count of requests is done on its one-second tick, so the duration it reports is a whole number of seconds.',
  ];
  for (const c of cases) {
    if (c.coreBusy && c.coreBusy.median < 0.85 && c.name !== 'count-sms') {
      lines.push(`this run: ${c.name} kept the server core only ${Math.round(c.coreBusy.median * 100)}% busy, so its figure is bounded by waiting (disk, database, other work on the machine, or the load generator), not by the server's own CPU.`);
    }
  }
  return lines;
}

// ---------------------------------------------------------------------------------------
// Main

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
  for (const c of FAIR_CASES) {
    if (otherSelected.has(c.name)) cases.push(await scriptCase(c));
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

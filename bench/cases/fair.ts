/** Fair queues and priority: scripts of bench/ run in a child each, and their targets. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { formatSpread, times, type CaseResult, type TargetVerdict } from '../report.js';
import { spread } from '../stats.js';
import { log } from '../harness/log.js';
import { options, root } from '../harness/options.js';
import { pinning } from '../harness/pinning.js';
import { postgresProblem } from '../harness/services.js';
import { SkipError } from '../harness/skip.js';
import type { FAIR_CASES } from './catalog.js';

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
export const FAIR_TPS = 200;
/** Each run of a fair-queue script must end within this, or the case is skipped. */
const FAIR_SCRIPT_DEADLINE_MS = 150_000;

/** Each run's figures of the fair-queue cases that ran, by case name, for the targets. */
const fairRuns = new Map<string, (FairnessFigures | ClaimFigures)[]>();

/**
 * Runs `npx tsx bench/<script> <args>` once in a child pinned to the server core (its SMSC
 * child, if any, with it) and resolves with the last JSON line it prints on stdout. Its
 * human output (stderr) is kept for the error of a failed run.
 */
export async function runScriptOnce<T>(script: string, args: readonly string[]): Promise<T> {
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
export async function scriptCase(c: (typeof FAIR_CASES)[number]): Promise<CaseResult> {
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

/** The fair queues' targets: B's delay and the drain beside a campaign, claims over many keys, priority. */
export function fairTargets(cases: CaseResult[], list: TargetVerdict[], why: (c: CaseResult | undefined, name: string) => string): void {
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

/**
 * The benchmark report: the figures of one run as a Markdown table with ratios to the
 * baseline and a met / not met verdict per target, with the method (bench/method.md),
 * printed and written to BENCHMARKS.md.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pairedRatio, spread, type Spread } from './stats.js';

/** The figures of one case over its runs; a skipped case has only `skipped`. */
export interface CaseResult {
  /** Short name, as `--case` matches it. */
  name: string;
  /** One line of what the case does. */
  title: string;
  /** Why the case did not run, if it did not. */
  skipped?: string;
  /** Messages in each request body (HTTP cases). */
  messagesPerRequest?: number;
  /** Requests answered 2xx per second. */
  requestsPerSec?: Spread | null;
  /** Messages accepted (or, end to end, reported) per second. */
  messagesPerSec?: Spread | null;
  /** Messages the router's worker finished (terminal state) per second of the measured part (router HTTP cases). */
  finishedPerSec?: Spread | null;
  /** Median latency, ms. */
  p50Ms?: Spread | null;
  /** 99th percentile latency, ms. */
  p99Ms?: Spread | null;
  /** Server CPU seconds during the measured part of a run. */
  cpuSec?: Spread | null;
  /** Server CPU seconds per wall second: 1.0 means its pinned core was saturated. */
  coreBusy?: Spread | null;
  /** Peak RSS of the server during the measured part of a run, MiB. */
  peakRssMb?: Spread | null;
  /**
   * HTTP cases: this case's figures in each round of the interleaved runs (index 0 is the
   * first round; `null` where it has no run), so that two cases are compared round by
   * round ({@link caseRatio}).
   */
  rounds?: ({ requestsPerSec: number; p99Ms: number } | null)[];
  /** The baseline case this one is compared with. */
  baseline?: string;
  /** Free-form observations (errors, partial completion, what a figure means). */
  notes: string[];
}

/** One target of the issue and what this run measured for it. */
export interface TargetVerdict {
  /** The target in words. */
  target: string;
  /** What was measured, in words. */
  measured: string;
  /** `met`, `not met`, or `not measured` (with the reason in `measured`). */
  verdict: 'met' | 'not met' | 'not measured';
}

/** Everything the report shows about the run. */
export interface RunReport {
  /** The command that produced it. */
  command: string;
  /** When it started, ISO 8601. */
  startedAt: string;
  /** Wall time of the whole run, s. */
  totalSec: number;
  /** Machine description lines. */
  machine: string[];
  /** How the run was set up (pinning, build, durations) and anything that disturbed it. */
  setup: string[];
  /** Per-case figures, in run order. */
  cases: CaseResult[];
  /** Target verdicts. */
  targets: TargetVerdict[];
  /** What limits each figure. */
  limits: string[];
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => (n >= 10 ? n.toFixed(0) : n.toFixed(2));
const mb = (n: number) => n.toFixed(0);
const secs = (n: number) => n.toFixed(2);
const pct = (n: number) => `${Math.round(n * 100)}%`;

/** `median [min-max]`, or the median alone for one run, or `-`. */
export function formatSpread(value: Spread | null | undefined, format: (n: number) => string): string {
  if (!value) return '-';
  if (value.runs === 1 || value.min === value.max) return format(value.median);
  return `${format(value.median)} [${format(value.min)}-${format(value.max)}]`;
}

/** A ratio as `0.93x`. */
export const times = (n: number) => `${n.toFixed(2)}x`;

/**
 * `c`'s figure `key` over `base`'s: round by round (median [min-max] of the rounds' ratios,
 * see `pairedRatio`) when both ran in rounds, else the ratio of their medians as a
 * one-value spread; `null` when either has no figure.
 */
export function caseRatio(c: CaseResult | undefined, base: CaseResult | undefined, key: 'requestsPerSec' | 'p99Ms'): Spread | null {
  if (c === undefined || base === undefined) return null;
  if (c.rounds !== undefined && base.rounds !== undefined) {
    return pairedRatio(c.rounds.map((r) => r?.[key] ?? null), base.rounds.map((r) => r?.[key] ?? null));
  }
  const value = c[key]?.median;
  const baseValue = base[key]?.median;
  return value === undefined || baseValue === undefined || baseValue === 0 ? null : spread([value / baseValue]);
}

/** The Markdown of the results table. */
export function resultsTable(cases: readonly CaseResult[]): string {
  const byName = new Map(cases.map((c) => [c.name, c]));
  const rows = [
    '| case | req/s | msg/s | finished msg/s | p50 ms | p99 ms | server CPU s | server core busy | peak RSS MiB | req/s vs baseline | p99 vs baseline |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const c of cases) {
    if (c.skipped !== undefined) {
      rows.push(`| ${c.name} | skipped: ${c.skipped.replace(/\|/g, '/')} | | | | | | | | | |`);
      continue;
    }
    const base = c.baseline === undefined ? undefined : byName.get(c.baseline);
    rows.push(
      `| ${c.name} | ${formatSpread(c.requestsPerSec, int)} | ${formatSpread(c.messagesPerSec, int)} | ${formatSpread(c.finishedPerSec, int)} | ` +
        `${formatSpread(c.p50Ms, ms)} | ${formatSpread(c.p99Ms, ms)} | ${formatSpread(c.cpuSec, secs)} | ` +
        `${formatSpread(c.coreBusy, pct)} | ${formatSpread(c.peakRssMb, mb)} | ` +
        `${formatSpread(caseRatio(c, base, 'requestsPerSec'), times)} | ${formatSpread(caseRatio(c, base, 'p99Ms'), times)} |`,
    );
  }
  return rows.join('\n');
}

/** The Markdown of the targets table. */
export function targetsTable(targets: readonly TargetVerdict[]): string {
  const rows = ['| target | measured | verdict |', '| --- | --- | --- |'];
  for (const t of targets) rows.push(`| ${t.target} | ${t.measured} | **${t.verdict}** |`);
  return rows.join('\n');
}

/** Where the hand-written part of the report lives: how it is measured, and how to compare versions. */
export const METHOD_PATH = fileURLToPath(new URL('./method.md', import.meta.url));

/** The hand-written method text ({@link METHOD_PATH}), trimmed. */
export function readMethod(path: string = METHOD_PATH): string {
  return readFileSync(path, 'utf8').trim();
}

/** The value of the machine line starting with `prefix` (`CPU: `), if there is one. */
function machineLine(machine: readonly string[], prefix: string): string | undefined {
  const line = machine.find((l) => l.startsWith(prefix));
  return line?.slice(prefix.length);
}

/**
 * The whole report as Markdown, in this order: a header naming the run and its machine,
 * the results, the targets with their verdicts, the cases, what bounds each figure, the
 * method (`method`, hand-written in bench/method.md), and how this run was set up. The
 * file holds the current run only: earlier runs are in git.
 */
export function renderReport(run: RunReport, method: string = readMethod()): string {
  const caseLines = run.cases.map((c) => `- **${c.name}**: ${c.title}${c.notes.length > 0 ? ` (${c.notes.join('; ')})` : ''}`);
  const cpu = machineLine(run.machine, 'CPU: ');
  const node = run.machine.find((l) => l.startsWith('Node '))?.split(',')[0];
  const on = [cpu, node].filter((part) => part !== undefined).join(', ');
  return [
    '# Benchmarks',
    '',
    `Written by \`${run.command}\`${on === '' ? '' : ` on ${on}`}, started ${run.startedAt}, ${Math.round(run.totalSec)} s.`,
    'Figures are median [min-max] over the runs. Every ratio is to a baseline measured in the same',
    'run, round by round: the median [min-max] of the ratios of the two runs of each round. Read',
    'the ratios rather than the absolute figures: those move with the machine (see Method).',
    '',
    '## Results',
    '',
    resultsTable(run.cases),
    '',
    '## Targets',
    '',
    targetsTable(run.targets),
    '',
    '## Cases',
    '',
    ...caseLines,
    '',
    '## What bounds each figure',
    '',
    ...run.limits.map((line) => `- ${line}`),
    '',
    method,
    '',
    '## This run',
    '',
    ...run.machine.map((line) => `- ${line}`),
    ...run.setup.map((line) => `- ${line}`),
    '',
  ].join('\n');
}

/**
 * Prints the report to stdout and, when `path` is given, writes it there, replacing the
 * file: it holds the current run and the method, nothing of earlier runs.
 */
export function publish(run: RunReport, path: string | null): void {
  const markdown = renderReport(run);
  process.stdout.write(`\n${markdown}\n`);
  if (path !== null) {
    writeFileSync(path, markdown);
    process.stdout.write(`written to ${path}\n`);
  }
}

/** The message list: one page with 1,000,000 messages stored (bench/list.ts in a child), and its target. */
import { spread } from '../stats.js';
import type { CaseResult, TargetVerdict } from '../report.js';
import { log } from '../harness/log.js';
import { postgresProblem } from '../harness/services.js';
import { SkipError } from '../harness/skip.js';
import type { LIST_CASES } from './catalog.js';
import { runScriptOnce } from './fair.js';

/** What bench/list.ts prints. */
interface ListFigures {
  stored: number;
  fillSeconds: number;
  pageSize: number;
  pages: { name: string; medianMs: number; p90Ms: number; messages: number }[];
  worstMedianMs: number;
}

/** The most a page's median may take. */
const LIST_TARGET_MS = 50;

/** Each run's figures, by case name, for the target. */
const listRuns = new Map<string, ListFigures>();

/** One run of bench/list.ts for the storage of `c` (the fill dominates: one run). */
export async function listCase(c: (typeof LIST_CASES)[number]): Promise<CaseResult> {
  const title = `${c.storage}: one page of 100 of a key's messages with 1,000,000 stored (900,000 the key's), newest, from a cursor, by state, recipient, profile and time; 30 pages each after 3, median (bench/list.ts ${c.arg}); p50 = the slowest kind's median`;
  if (c.arg === 'postgres') {
    const problem = await postgresProblem();
    if (problem !== null) return { name: c.name, title, skipped: problem, notes: [] };
  }
  let r: ListFigures;
  try {
    r = await runScriptOnce<ListFigures>('list.ts', [c.arg]);
  } catch (error) {
    return { name: c.name, title, skipped: error instanceof SkipError ? error.message : `failed: ${(error as Error).message}`, notes: [] };
  }
  listRuns.set(c.name, r);
  log(`${c.name}: slowest page median ${r.worstMedianMs.toFixed(2)} ms (${r.stored.toLocaleString('en-US')} stored in ${r.fillSeconds} s)`);
  const pages = r.pages.map((page) => `${page.name} ${page.medianMs.toFixed(2)} ms (p90 ${page.p90Ms.toFixed(2)})`).join('; ');
  return { name: c.name, title, p50Ms: spread([r.worstMedianMs]), notes: [`medians: ${pages}`, `filled in ${r.fillSeconds} s`] };
}

/** The list's target on each storage: a page under {@link LIST_TARGET_MS} ms. */
export function listTargets(cases: CaseResult[], list: TargetVerdict[], why: (c: CaseResult | undefined, name: string) => string): void {
  for (const [name, storage] of [
    ['list-sqlite', 'SQLite'],
    ['list-postgres', 'PostgreSQL'],
  ] as const) {
    const target = `a list page of 100 with 1,000,000 messages stored, ${storage}: every kind's median < ${LIST_TARGET_MS} ms`;
    const r = listRuns.get(name);
    if (r === undefined) {
      list.push({ target, measured: why(cases.find((c) => c.name === name), name), verdict: 'not measured' });
      continue;
    }
    list.push({ target, measured: `slowest median ${r.worstMedianMs.toFixed(2)} ms`, verdict: r.worstMedianMs < LIST_TARGET_MS ? 'met' : 'not met' });
  }
}

/**
 * The recipient stage alone (bench/numbers.ts), in a fresh child pinned to the server core:
 * a new number read by libphonenumber-js's parser and by the compiled patterns, paired and
 * alternated within each run. Its figure is numbers read per second by the compiled path;
 * the targets set it against the CPU of a memory-1 and a memory-100 request.
 */
import { describeNumbers, type NumbersBenchResult } from '../numbers.js';
import type { CaseResult } from '../report.js';
import { spread } from '../stats.js';
import { log } from '../harness/log.js';
import { options } from '../harness/options.js';
import { runPinnedOnce } from '../harness/servers.js';
import { SkipError } from '../harness/skip.js';

/** Runs of bench/servers/numbers.ts: new numbers read per second, the library's in the same runs. */
export async function numbersCase(): Promise<CaseResult> {
  const title = 'recipient check of numbers never seen (bench/numbers.ts, each run a fresh child pinned to core 0): compiled patterns against libphonenumber-js\'s parser, alternated';
  const rounds = options.quick ? 7 : 21;
  const compiled: number[] = [];
  const library: number[] = [];
  let last: NumbersBenchResult | null = null;
  for (let run = 1; run <= options.runs; run++) {
    try {
      last = await runPinnedOnce<NumbersBenchResult>('numbers', { BENCH_ROUNDS: String(rounds) });
      compiled.push(1e6 / last.compiledUsPerNumber);
      library.push(1e6 / last.libraryUsPerNumber);
      log(`numbers run ${run}: ${last.compiledUsPerNumber.toFixed(2)} us a new number compiled, ${last.libraryUsPerNumber.toFixed(2)} us by the library`);
    } catch (error) {
      return { name: 'numbers', title, skipped: error instanceof SkipError ? error.message : `failed: ${(error as Error).message}`, notes: [] };
    }
  }
  const perSec = spread(compiled)!;
  const libraryMedian = spread(library)!.median;
  return {
    name: 'numbers',
    title,
    messagesPerSec: perSec,
    notes: [
      `numbers/s = new numbers read and judged per second by the compiled path; by libphonenumber-js's parser in the same runs: ${Math.round(libraryMedian).toLocaleString('en-US')} (compiled ${(perSec.median / libraryMedian).toFixed(1)}x)`,
      ...(last === null ? [] : describeNumbers(last).map((line) => `last run: ${line}`)),
    ],
  };
}

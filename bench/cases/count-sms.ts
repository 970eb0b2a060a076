/** countSms alone, in a fresh child pinned to the server core, against a naive counter. */
import { COUNT_SMS_WARMUPS, NAIVE_WARMUPS, type CountSmsBenchResult } from '../count-sms.js';
import type { CaseResult } from '../report.js';
import { spread } from '../stats.js';
import { log } from '../harness/log.js';
import { options } from '../harness/options.js';
import { runPinnedOnce } from '../harness/servers.js';
import { SkipError } from '../harness/skip.js';

/** Runs of bench/servers/count-sms.ts: countSms's rate, and the naive counter's in the same runs. */
export async function countSmsCase(): Promise<CaseResult> {
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

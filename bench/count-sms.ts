/**
 * Benchmark of `countSms`: messages per second over 100,000 mixed messages (GSM-7 and
 * UCS-2, 1 to 5 parts), beside a naive counter measured in the same run.
 *
 * Run: `npx tsx bench/count-sms.ts`. A harness can import {@link benchCountSms} instead.
 */
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { countSms } from '../src/sms/segments.js';
import { mulberry32 } from '../src/util/mulberry32.js';

/** What one benchmark run measured. */
export interface CountSmsBenchResult {
  /** Messages in the corpus. */
  messages: number;
  /** Timed runs of `countSms` (after {@link COUNT_SMS_WARMUPS} untimed). */
  runs: number;
  /** Timed runs of the naive counter (after {@link NAIVE_WARMUPS} untimed). */
  baselineRuns: number;
  /** Median messages per second of `countSms`. */
  countSmsPerSec: number;
  /** Median messages per second of the naive baseline counter. */
  baselinePerSec: number;
  /** `countSmsPerSec / baselinePerSec`. */
  speedup: number;
  /** Total SMS units of the corpus (the same for both counters, so the work is comparable). */
  totalSms: number;
}

/** Options of {@link benchCountSms}. */
export interface CountSmsBenchOptions {
  /** Messages in the corpus; default 100,000. */
  messages?: number;
  /** Timed runs of `countSms`; default 7. */
  runs?: number;
  /**
   * Timed runs of the naive counter; default 3. Fewer than countSms's because it is only
   * the comparison, and at 25 times slower each of its passes over 100,000 texts takes
   * 1-2 s: with countSms's 3 + 5 passes it took most of the harness's count-sms time.
   */
  baselineRuns?: number;
}


const WORDS = ['Habari', 'yako', 'your', 'code', 'is', '4821', 'pay', 'KES', '1,500', 'to', 'M-PESA', 'now.', 'Asante!'];
const GSM_EXTRAS = ['\u20AC', '{', '}', '[', ']', '~', '^', '|', '\\', '\u00E9', '\u0394', '\u00A3'];
const UCS2_EXTRAS = ['\u0436\u0438\u0437\u043D\u044C', '\u4F60\u597D', '\uD83D\uDE00', '\u00E7a', '\u0645\u0631\u062D\u0628\u0627'];

/** Builds `count` messages: 60% plain GSM-7, 20% GSM-7 with extension or accented characters, 20% UCS-2. */
function buildCorpus(count: number): string[] {
  const random = mulberry32(0x5e9);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const corpus: string[] = [];
  for (let m = 0; m < count; m++) {
    const kind = random();
    const ucs2 = kind >= 0.8;
    const parts = 1 + Math.floor(random() * 5);
    // Aim at a length inside the chosen number of parts.
    const perPart = ucs2 ? 67 : 153;
    const target = parts === 1 ? Math.floor(random() * (ucs2 ? 70 : 160)) + 1 : (parts - 1) * perPart + 1 + Math.floor(random() * (perPart - 1));
    let text = '';
    while (text.length < target) {
      const r = random();
      if (ucs2 && r < 0.2) text += pick(UCS2_EXTRAS);
      else if (!ucs2 && kind >= 0.6 && r < 0.1) text += pick(GSM_EXTRAS);
      else text += pick(WORDS);
      text += ' ';
    }
    // Request texts come out of JSON.parse as flat strings; so do these.
    corpus.push(JSON.parse(JSON.stringify(text.slice(0, target))) as string);
  }
  return corpus;
}

const NAIVE_GSM = /^[@\u00A3$\u00A5\u00E8\u00E9\u00F9\u00EC\u00F2\u00C7\n\u00D8\u00F8\r\u00C5\u00E5\u0394_\u03A6\u0393\u039B\u03A9\u03A0\u03A8\u03A3\u0398\u039E\u00C6\u00E6\u00DF\u00C9 !"#\u00A4%&'()*+,\-./0-9:;<=>?\u00A1A-Z\u00C4\u00D6\u00D1\u00DC\u00A7\u00BFa-z\u00E4\u00F6\u00F1\u00FC\u00E0\f^{}\\[~\]|\u20AC]*$/;
const NAIVE_EXTENSION = /[\f^{}\\[~\]|\u20AC]/;

/** The obvious counter: spread into characters, regex tests, plain division. */
function naiveCount(text: string): number {
  const chars = [...text];
  if (NAIVE_GSM.test(text)) {
    let septets = 0;
    for (const ch of chars) septets += NAIVE_EXTENSION.test(ch) ? 2 : 1;
    return septets <= 160 ? 1 : Math.ceil(septets / 153);
  }
  return text.length <= 70 ? 1 : Math.ceil(text.length / 67);
}

/** Untimed passes before `countSms` is timed, so the JIT has optimised it. */
export const COUNT_SMS_WARMUPS = 3;
/** Untimed passes before the naive counter is timed: one, as its passes are 25 times slower. */
export const NAIVE_WARMUPS = 1;

function timeRuns(corpus: readonly string[], count: (text: string) => number, runs: number, warmups: number): { perSec: number; total: number } {
  let total = 0;
  // Warm-up, so the JIT has optimised the counter before it is timed.
  for (let w = 0; w < warmups; w++) for (const text of corpus) total += count(text);
  const rates: number[] = [];
  for (let r = 0; r < runs; r++) {
    total = 0;
    const start = performance.now();
    for (const text of corpus) total += count(text);
    const seconds = (performance.now() - start) / 1000;
    rates.push(corpus.length / seconds);
  }
  rates.sort((a, b) => a - b);
  return { perSec: rates[Math.floor(rates.length / 2)]!, total };
}

/**
 * Times `countSms` and the naive baseline over the same deterministic corpus and returns
 * the median rates. Synchronous work behind a promise, so a harness can await it in line
 * with benchmarks that are truly asynchronous.
 */
export async function benchCountSms(options: CountSmsBenchOptions = {}): Promise<CountSmsBenchResult> {
  const messages = options.messages ?? 100_000;
  const runs = options.runs ?? 7;
  const baselineRuns = options.baselineRuns ?? 3;
  const corpus = buildCorpus(messages);
  const fast = timeRuns(corpus, (text) => countSms(text).smsCount, runs, COUNT_SMS_WARMUPS);
  const naive = timeRuns(corpus, naiveCount, baselineRuns, NAIVE_WARMUPS);
  return {
    messages,
    runs,
    baselineRuns,
    countSmsPerSec: fast.perSec,
    baselinePerSec: naive.perSec,
    speedup: fast.perSec / naive.perSec,
    totalSms: fast.total,
  };
}

// Only when run as `npx tsx bench/count-sms.ts`: the harness's bundle of
// bench/servers/count-sms.ts inlines this module, and its URL is then the bundle's own.
const isMain = import.meta.url.endsWith('/count-sms.ts') && process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) {
  const result = await benchCountSms();
  const rate = (n: number) => `${Math.round(n).toLocaleString('en-US')} messages/s`;
  console.log(`countSms over ${result.messages.toLocaleString('en-US')} mixed messages (${result.totalSms} SMS), median of ${result.runs} runs`);
  console.log(`  countSms:       ${rate(result.countSmsPerSec)}`);
  console.log(`  naive baseline: ${rate(result.baselinePerSec)}`);
  console.log(`  speedup:        ${result.speedup.toFixed(1)}x`);
}

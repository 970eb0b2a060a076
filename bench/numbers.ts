/**
 * Micro-benchmark of the recipient stage (issue 44): what reading a number never seen
 * before costs, by libphonenumber-js's own parser (how every number was read before
 * international-reading.ts) and by the compiled patterns that read international digits
 * now, beside a memo hit and beside the send validation the stage follows (ajv, the seed's
 * whole check) for a 1-message and a 100-message body.
 *
 * Paired and alternated: each round times the two readers over the same numbers, in
 * turn, the order swapped every round, so a busy shared machine slows both alike; figures
 * are the medians over the rounds. The corpus is mobiles of the countries the issue names
 * (Kenya as the bench's bodies, Nigeria, India, the UK, the US, Germany), none twice.
 *
 * Run: `npx tsx bench/numbers.ts` (or the `numbers` case of `npm run bench`, in a pinned
 * child). A harness imports {@link benchNumbers}.
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { createValidators } from '../src/http/validate-request.js';
import { checkRecipients } from '../src/http/recipients.js';
import { LIMIT_DEFAULTS } from '../src/http/options.js';
import { readInternationalByLibrary, readNumberUncached } from '../src/numbers/read-number.js';
import { numberProblem } from '../src/numbers/policy.js';
import type { Principal } from '../src/auth/principal.js';

/** What {@link benchNumbers} measured, microseconds, medians over the rounds. */
export interface NumbersBenchResult {
  /** A new number read and judged by libphonenumber-js's parser (the earlier path). */
  libraryUsPerNumber: number;
  /** A new number read and judged with the compiled patterns (the path now). */
  compiledUsPerNumber: number;
  /** A number the memo holds, through the whole recipient stage. */
  memoUsPerNumber: number;
  /** The send validation alone of a 1-message and a 100-message body. */
  validate1Us: number;
  validate100Us: number;
  rounds: number;
  /** Numbers timed per reader and round. */
  numbersPerRound: number;
}

/** Mobile ranges of the countries: a prefix and how many digits follow it. */
const RANGES: readonly [string, number][] = [
  ['2547', 8], // Kenya, as bench/servers/host.ts `benchItems`
  ['25411', 7],
  ['234803', 7], // Nigeria
  ['9198', 8], // India
  ['447400', 6], // the UK
  ['1202555', 4], // the US
  ['49151', 8], // Germany
];

/** `count` distinct mobiles, round `round`'s own (no two rounds share one). */
function corpus(count: number, round: number): string[] {
  const numbers: string[] = [];
  for (let i = 0; i < count; i++) {
    const [prefix, digits] = RANGES[i % RANGES.length]!;
    const serial = (round * count + i) * 7919;
    numbers.push(prefix + String(serial % 10 ** digits).padStart(digits, '0'));
  }
  return numbers;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Microseconds per item of `step` over `items`. */
function timePer(items: readonly string[], step: (item: string) => void): number {
  const start = performance.now();
  for (const item of items) step(item);
  return ((performance.now() - start) * 1000) / items.length;
}

/** Microseconds per call of `step`, `calls` times. */
function timeCalls(step: () => void, calls: number): number {
  const start = performance.now();
  for (let i = 0; i < calls; i++) step();
  return ((performance.now() - start) * 1000) / calls;
}

const byLibrary = (raw: string): void => void numberProblem(readInternationalByLibrary(raw)!, 'mobile');
const compiled = (raw: string): void => void numberProblem(readNumberUncached(raw, null), 'mobile');

function body(count: number): unknown {
  return {
    profile_code: '12345',
    messages: Array.from({ length: count }, (_, i) => ({ recipient: `2547${String(10_000_000 + i)}`, message: 'Hello from the bench', external_id: `b-${i}` })),
  };
}

/** Runs `rounds` paired rounds of `perRound` numbers each (after two untimed ones) and returns the medians. */
export function benchNumbers({ rounds = 21, perRound = 2000 } = {}): NumbersBenchResult {
  const validators = createValidators(LIMIT_DEFAULTS, () => null);
  const principal: Principal = { id: 'bench' };
  const profile = { code: '12345' };
  const [one, hundred] = [body(1), body(100)];
  const validate1 = (): void => void validators.quick(one);
  const validate100 = (): void => void validators.quick(hundred);
  const memoHit = (): void => void checkRecipients(validators.quick(hundred), profile, principal);
  const library: number[] = [];
  const fresh: number[] = [];
  const memo: number[] = [];
  const v1: number[] = [];
  const v100: number[] = [];
  for (let round = -2; round < rounds; round++) {
    const numbers = corpus(perRound, round + 2);
    // Swapped every round: neither reader always runs on a cache the other warmed.
    const [first, second] = round % 2 === 0 ? [byLibrary, compiled] : [compiled, byLibrary];
    const a = timePer(numbers, first);
    const b = timePer(numbers, second);
    const hundredMemo = timeCalls(memoHit, 40) - timeCalls(validate100, 40);
    const validated1 = timeCalls(validate1, 2000);
    const validated100 = timeCalls(validate100, 40);
    if (round < 0) continue;
    library.push(first === byLibrary ? a : b);
    fresh.push(first === byLibrary ? b : a);
    memo.push(hundredMemo / 100);
    v1.push(validated1);
    v100.push(validated100);
  }
  return {
    libraryUsPerNumber: median(library),
    compiledUsPerNumber: median(fresh),
    memoUsPerNumber: Math.max(0, median(memo)),
    validate1Us: median(v1),
    validate100Us: median(v100),
    rounds,
    numbersPerRound: perRound,
  };
}

/** The figures as lines a person reads. */
export function describeNumbers(r: NumbersBenchResult): string[] {
  return [
    `a new number: ${r.libraryUsPerNumber.toFixed(2)} us by libphonenumber-js's parser, ${r.compiledUsPerNumber.toFixed(2)} us compiled (${(r.libraryUsPerNumber / r.compiledUsPerNumber).toFixed(1)}x); a memo hit ${r.memoUsPerNumber.toFixed(2)} us`,
    `a request of 1 new number: +${r.compiledUsPerNumber.toFixed(1)} us (was +${r.libraryUsPerNumber.toFixed(1)}) beside validation ${r.validate1Us.toFixed(1)} us`,
    `a request of 100 new numbers: +${(100 * r.compiledUsPerNumber).toFixed(0)} us (was +${(100 * r.libraryUsPerNumber).toFixed(0)}) beside validation ${r.validate100Us.toFixed(0)} us`,
    `(${r.rounds} paired rounds of ${r.numbersPerRound} numbers each, medians)`,
  ];
}

// Only when run as `npx tsx bench/numbers.ts`, not when a bundle inlines this module.
const isMain = import.meta.url.endsWith('/numbers.ts') && process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) for (const line of describeNumbers(benchNumbers())) console.log(line);

/**
 * Micro-benchmark of the recipient stage (issue 44): the send validation of a 1-message and a
 * 100-message quick-send body, alone (what the seed did: ajv with the digits pattern) and
 * followed by the recipient check (libphonenumber, `max` metadata), with numbers never seen
 * before and with numbers the memo already holds. Runs are interleaved, so a busy machine
 * slows both sides alike; medians are printed.
 *
 * Run: `npx tsx bench/numbers.ts`.
 */
import { performance } from 'node:perf_hooks';
import { createValidators } from '../src/http/validate-request.js';
import { checkRecipients } from '../src/http/recipients.js';
import { LIMIT_DEFAULTS } from '../src/http/options.js';
import { readNumberUncached } from '../src/numbers/read-number.js';
import { numberProblem } from '../src/numbers/policy.js';
import type { Principal } from '../src/auth/principal.js';

const validators = createValidators(LIMIT_DEFAULTS, () => null);
const principal: Principal = { id: 'bench' };
const profile = { code: '12345' };

/** The bench body's recipients (bench/servers/host.ts `benchItems`): Kenyan mobiles. */
function body(count: number): unknown {
  return {
    profile_code: '12345',
    messages: Array.from({ length: count }, (_, i) => ({ recipient: `2547${String(10_000_000 + i)}`, message: 'Hello from the bench', external_id: `b-${i}` })),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Microseconds per call of `step`, median of `runs` timed batches. */
function timeBatch(step: () => void, calls: number): number {
  const start = performance.now();
  for (let i = 0; i < calls; i++) step();
  return ((performance.now() - start) * 1000) / calls;
}

function measure(count: number, runs = 15): void {
  const payload = body(count);
  const calls = Math.max(20, Math.round(4000 / count));
  const validateOnly = (): void => void validators.quick(payload);
  const validateAndCheck = (): void => void checkRecipients(validators.quick(payload), profile, principal);
  const validateAndCheckUncached = (): void => {
    const request = validators.quick(payload);
    for (const item of request.items) numberProblem(readNumberUncached(item.recipient, null), 'mobile');
  };
  for (let i = 0; i < 3; i++) {
    timeBatch(validateOnly, calls);
    timeBatch(validateAndCheck, calls);
    timeBatch(validateAndCheckUncached, calls);
  }
  const seed: number[] = [];
  const memo: number[] = [];
  const fresh: number[] = [];
  for (let r = 0; r < runs; r++) {
    seed.push(timeBatch(validateOnly, calls));
    memo.push(timeBatch(validateAndCheck, calls));
    fresh.push(timeBatch(validateAndCheckUncached, calls));
  }
  const [s, m, f] = [median(seed), median(memo), median(fresh)];
  console.log(
    `${String(count).padStart(3)} message(s): validate ${s.toFixed(1)} us; + recipients, memo hit ${m.toFixed(1)} us (+${(m - s).toFixed(1)}); ` +
      `+ recipients, never seen ${f.toFixed(1)} us (+${(f - s).toFixed(1)}, ${((f - s) / count).toFixed(2)} us/number)`,
  );
}

measure(1);
measure(100);

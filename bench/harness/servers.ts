/**
 * The server children: each bench/servers/<script>.ts bundled once (or run with tsx),
 * started pinned to the server core, and stopped; and one-shot pinned children that print
 * their result as a JSON line.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ServerEvent } from '../servers/host.js';
import { options, root } from './options.js';
import { pinning } from './pinning.js';
import { scratch } from './scratch.js';
import { SkipError } from './skip.js';

const SERVER_SCRIPTS = ['baseline', 'memory', 'sqlite', 'postgres', 'mysql', 'smpp-raw', 'count-sms', 'numbers', 'store-insert', 'store-life'] as const;
/** A script of bench/servers/. */
export type ServerScript = (typeof SERVER_SCRIPTS)[number];

const buildDir = join(root, 'node_modules', '.cache', 'sms-outbox-bench');
/** Which tree a server was built from: the working tree, or the `--against` commit. */
export type Variant = 'current' | 'against';
/** Each script's bundle, or why it does not build, by tree. */
export const built = new Map<`${Variant}/${ServerScript}`, { file: string } | { error: string }>();
/** How the servers run (a bundle, or tsx), for the report; set by {@link buildServers}. */
export let runMode = '';

/**
 * Bundles each server script with esbuild (what tsup uses; dependencies stay external) into
 * node_modules/.cache, so the servers run on plain `node` without tsx's loader. One script
 * that fails to build (a src/ file not there yet) skips only its cases. With `--against`,
 * the scripts of that commit (checked out in a temporary git worktree) are bundled too,
 * into a subfolder, where they still find this checkout's node_modules.
 */
export async function buildServers(): Promise<void> {
  if (options.tsx) {
    runMode = 'servers run with `node --import tsx bench/servers/<case>.ts` (--tsx)';
    return;
  }
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch (error) {
    if (options.against !== null || options.paired) throw new Error(`esbuild not loadable, so nothing to compare: ${String(error)}`);
    runMode = `servers run with \`node --import tsx\` (esbuild not loadable: ${String(error)})`;
    options.tsx = true;
    return;
  }
  const trees: [Variant, string, string][] = [['current', root, buildDir]];
  if (options.against !== null) {
    const tree = join(scratch, 'against');
    execFileSync('git', ['worktree', 'add', '--detach', tree, options.against], { cwd: root, stdio: 'ignore' });
    trees.push(['against', tree, join(buildDir, 'against')]);
  }
  for (const [variant, tree, outDir] of trees) {
    mkdirSync(outDir, { recursive: true });
    for (const script of SERVER_SCRIPTS) {
      const outfile = join(outDir, `${script}.mjs`);
      try {
        await esbuild.build({
          entryPoints: [join(tree, 'bench', 'servers', `${script}.ts`)],
          outfile,
          bundle: true,
          platform: 'node',
          format: 'esm',
          target: 'node20',
          packages: 'external',
          sourcemap: 'linked',
          logLevel: 'silent',
        });
        built.set(`${variant}/${script}`, { file: outfile });
      } catch (error) {
        const first = (error as { errors?: { text: string; location?: { file: string } | null }[] }).errors?.[0];
        built.set(`${variant}/${script}`, { error: first ? `${first.text}${first.location ? ` (${first.location.file})` : ''}` : String(error) });
      }
    }
  }
  runMode =
    'servers run with plain `node` on an esbuild bundle of bench/servers/<case>.ts and src/ (the same bundler and target as `npm run build`; dependencies external), so no tsx loader in the measured process';
}

/** A running server child. */
export interface ServerChild {
  pid: number;
  port: number;
  /** Sends SIGTERM and waits for the exit (SIGKILL after 15 s). */
  stop(): Promise<void>;
  /** Messages the router has finished so far (SIGUSR2); `null` from a server without a router, or no answer in 5 s. */
  finished(): Promise<number | null>;
  /** The last lines of its stderr. */
  stderr(): string;
}

/**
 * The command and arguments that run `script` (of `variant`'s tree) pinned to the server
 * core, under `wrap` (a command prefix such as callgrind's) if given.
 */
function pinnedCommand(script: ServerScript, variant: Variant = 'current', wrap: readonly string[] = []): [string, string[]] {
  let args: string[];
  if (options.tsx) args = ['--import', 'tsx', join(root, 'bench', 'servers', `${script}.ts`)];
  else {
    const entry = built.get(`${variant}/${script}`);
    if (!entry) throw new SkipError(`${script} not built`);
    if ('error' in entry) throw new SkipError(`${script} does not build: ${entry.error}`);
    // BENCH_CPU_PROF=<dir>: each child writes a V8 CPU profile there when it exits.
    args = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`, entry.file] : [entry.file];
  }
  const [command, ...prefix] = [...pinning.server, ...wrap, process.execPath];
  return [command!, [...prefix, ...args]];
}

/** How a server child is launched beyond its script: under a command prefix, given longer to start. */
interface Launch {
  /** A command prefix (callgrind's, say). */
  wrap?: readonly string[];
  /** How long it may take to listen; default 30 s. */
  listenWithinMs?: number;
}

/** Starts `script` (of `variant`'s tree) pinned to the server core and resolves once it prints its port. */
export async function startServer(script: ServerScript, env: Record<string, string> = {}, variant: Variant = 'current', launch: Launch = {}): Promise<ServerChild> {
  const [command, args] = pinnedCommand(script, variant, launch.wrap);
  const listenWithinMs = launch.listenWithinMs ?? 30_000;
  const child: ChildProcess = spawn(command, args, {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const errLines: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    errLines.push(line);
    if (errLines.length > 20) errLines.shift();
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const events: ServerEvent[] = [];
  let onProgress: ((finished: number | null) => void) | null = null;
  const port = await new Promise<number>((done, fail) => {
    const timer = setTimeout(() => fail(new SkipError(`${script} server did not listen within ${listenWithinMs / 1000} s: ${errLines.slice(-3).join(' / ')}`)), listenWithinMs);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const event = JSON.parse(line) as ServerEvent;
      if (event.event === 'progress') {
        onProgress?.(event.finished);
        return;
      }
      events.push(event);
      if (event.event === 'listening') {
        clearTimeout(timer);
        done(event.port);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      fail(new SkipError(`${script} server exited before listening: ${errLines.filter((l) => l.trim() !== '').slice(-4).join(' / ') || `code ${child.exitCode}`}`));
    });
  });
  return {
    pid: child.pid!,
    port,
    stderr: () => errLines.join('\n'),
    finished: () =>
      new Promise<number | null>((done) => {
        const timer = setTimeout(() => settle(null), 5_000);
        const settle = (finished: number | null) => {
          clearTimeout(timer);
          onProgress = null;
          done(finished);
        };
        onProgress = settle;
        child.kill('SIGUSR2');
      }),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Runs `script` once, pinned to the server core, and resolves with the JSON line it prints
 * when its event is `done`; any other event (`error`, with a message) or an exit without a
 * line skips the case.
 */
export async function runPinnedOnce<T>(script: ServerScript, env: Record<string, string>): Promise<T> {
  const [command, args] = pinnedCommand(script);
  const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((done, fail) => {
    let answered = false;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const event = JSON.parse(line) as { event: string; message?: string };
      answered = true;
      if (event.event === 'done') done(event as T);
      else fail(new SkipError(`${script}: ${event.message ?? line}`));
    });
    child.once('exit', (code) => {
      if (!answered) fail(new SkipError(`${script} exited with ${code} and no result`));
    });
  });
}

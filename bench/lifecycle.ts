/**
 * `npm run bench:lifecycle -- [--against ref,ref] [--storage memory,sqlite] [--messages n]
 * [--warmup n] [--rounds n] [--untraced]`: instructions per message, each message carried
 * from its HTTP request to its end (store, submission, receipt) in one process
 * (bench/lifecycle-child.ts), counted by callgrind for the working tree and for each commit
 * named, checked out beside it. Where the HTTP cases' `--instructions` counts a request and
 * whatever share of the worker's work fell in the counted window, this counts whole
 * lifecycles, so two versions are compared on the same work. It includes the in-process
 * client's instructions (the same in every version: a ratio is a lower bound of the router's
 * own). `--untraced` adds the working tree with `tracing: false`, the path of a host without
 * `@opentelemetry/api`. Prints a table; writes nothing.
 */
import { spawn, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { callgrindPrefix, callgrindProblem, instructionsSoFar, startCounting } from './instructions.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The command line's value of `--name`, or `fallback`. */
function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : (process.argv[at + 1] ?? fallback);
}

/** One version measured: a checkout and how its router is configured. */
interface Version {
  name: string;
  checkout: string;
  env: Record<string, string>;
}

/** Instructions per message of one run of `version` on `storage`. */
async function measure(version: Version, storage: string, warmup: number, messages: number, scratch: string): Promise<number> {
  const outDir = mkdtempSync(join(scratch, 'callgrind-'));
  const [valgrind, ...valgrindArgs] = callgrindPrefix(outDir);
  const child = spawn(valgrind!, [...valgrindArgs, process.execPath, '--import', 'tsx', join(root, 'bench', 'lifecycle-child.ts')], {
    cwd: root,
    env: { ...process.env, ...version.env, BENCH_CHECKOUT: version.checkout, BENCH_STORAGE: storage, BENCH_WARMUP: String(warmup), BENCH_MESSAGES: String(messages), BENCH_SCRATCH: scratch },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  // The child's lines as they come, each awaited in turn (a `for await` would close the reader at its first return).
  const seen: string[] = [];
  let wake: (() => void) | null = null;
  let closed = false;
  const lines = createInterface({ input: child.stdout! });
  lines.on('line', (line) => (seen.push(line), wake?.()));
  lines.on('close', () => ((closed = true), wake?.()));
  const next = async (expected: string): Promise<void> => {
    for (;;) {
      const line = seen.shift();
      if (line === expected) return;
      if (line !== undefined) continue;
      if (closed) throw new Error(`${version.name} on ${storage}: the child ended before '${expected}'`);
      await new Promise<void>((resolve) => (wake = resolve));
    }
  };
  try {
    await next('ready');
    startCounting(child.pid!);
    child.stdin!.write('go\n');
    await next('done');
    const counted = instructionsSoFar(child.pid!, outDir);
    child.stdin!.write('end\n');
    await once(child, 'exit');
    if (counted === null) throw new Error(`${version.name} on ${storage}: callgrind wrote no count`);
    return counted / messages;
  } finally {
    child.kill();
    rmSync(outDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const problem = callgrindProblem();
  if (problem !== null) throw new Error(`nothing measured: ${problem}`);
  const storages = option('storage', 'memory,sqlite').split(',');
  const messages = Number(option('messages', '1000'));
  // V8 still optimizes long after a few hundred requests: counted too early, a run reads
  // tens of percent more than a warm one, and differently from run to run.
  const warmup = Number(option('warmup', '2000'));
  const rounds = Number(option('rounds', '2'));
  const scratch = mkdtempSync(join(tmpdir(), 'sms-outbox-lifecycle-'));
  const versions: Version[] = [{ name: 'working tree', checkout: root, env: {} }];
  if (process.argv.includes('--untraced')) versions.push({ name: 'working tree, tracing: false', checkout: root, env: { BENCH_TRACING: 'off' } });
  const refs = option('against', '').split(',').filter(Boolean);
  try {
    for (const ref of refs) {
      const checkout = join(scratch, ref.replace(/[^\w.-]/g, '_'));
      execFileSync('git', ['worktree', 'add', '--detach', checkout, ref], { cwd: root, stdio: 'ignore' });
      symlinkSync(join(root, 'node_modules'), join(checkout, 'node_modules'));
      versions.push({ name: ref, checkout, env: {} });
    }
    const results = new Map<string, number[]>();
    for (let round = 0; round < rounds; round++) {
      for (const storage of storages) {
        // Every other round in reverse order, so a drift of the machine skews no version alone.
        for (const version of round % 2 === 0 ? versions : [...versions].reverse()) {
          const perMessage = await measure(version, storage, warmup, messages, scratch);
          const key = `${storage}\t${version.name}`;
          results.set(key, [...(results.get(key) ?? []), perMessage]);
          process.stdout.write(`round ${round + 1}: ${version.name} on ${storage}: ${Math.round(perMessage).toLocaleString('en-US')} instructions a message\n`);
        }
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    process.stdout.write(`\n${messages} lifecycles counted after ${warmup} uncounted, ${rounds} round(s); ratio: working tree / version\n`);
    process.stdout.write('| storage | version | instructions a message (median) | runs | working tree / version |\n|---|---|---|---|---|\n');
    for (const storage of storages) {
      const current = median(results.get(`${storage}\tworking tree`)!);
      for (const version of versions) {
        const values = results.get(`${storage}\t${version.name}`)!;
        const line = [storage, version.name, Math.round(median(values)).toLocaleString('en-US'), values.map((v) => Math.round(v / 1000) + 'k').join(', '), (current / median(values)).toFixed(3)];
        process.stdout.write(`| ${line.join(' | ')} |\n`);
      }
    }
  } finally {
    for (const ref of refs) {
      try {
        execFileSync('git', ['worktree', 'remove', '--force', join(scratch, ref.replace(/[^\w.-]/g, '_'))], { cwd: root, stdio: 'ignore' });
      } catch {
        // Never added (a bad ref): nothing to remove.
      }
    }
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();

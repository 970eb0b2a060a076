/**
 * Instruction counts of a server child, with valgrind's callgrind: `npm run bench --
 * --instructions`. Wall-clock figures on a shared virtual machine move by tens of percent
 * from one run to the next; the number of instructions a
 * server executes per request moves by a few percent (V8's compiler and garbage collector
 * still run on their own schedule), whatever else the machine is doing. It
 * counts user-space work only (not the kernel's TCP or fsync, nor time spent waiting), so it
 * judges a change to the code, not the throughput a user sees: the throughput cases do that.
 *
 * How: the server runs under callgrind with instrumentation off (so it starts and warms up
 * at a tenth of its speed rather than a fiftieth), `callgrind_control -i on` starts counting
 * once it is warm, and `callgrind_control -d` writes the counts out after the measured
 * requests; the counts of every thread are summed.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Whether `valgrind` and `callgrind_control` can be run here; the reason if not. */
export function callgrindProblem(): string | null {
  for (const tool of ['valgrind', 'callgrind_control']) {
    try {
      execFileSync(tool, ['--version'], { stdio: 'ignore' });
    } catch {
      return `${tool} not found (Debian's package valgrind has both)`;
    }
  }
  return null;
}

/**
 * The command prefix that runs a process under callgrind, counting nothing until
 * {@link startCounting}, writing its counts into `outDir`. `--smc-check=all-non-file`:
 * V8 writes machine code at run time, which valgrind must notice to run it.
 */
export function callgrindPrefix(outDir: string): string[] {
  return ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', `--callgrind-out-file=${join(outDir, 'callgrind.%p.out')}`];
}

/** Starts counting the instructions of `pid` (a process started with {@link callgrindPrefix}). */
export function startCounting(pid: number): void {
  execFileSync('callgrind_control', ['--instr=on', String(pid)], { stdio: 'ignore' });
}

/**
 * Writes out the counts of `pid` and returns the instructions it executed since
 * {@link startCounting}, all threads together; `null` if no count could be read.
 */
export function instructionsSoFar(pid: number, outDir: string): number | null {
  execFileSync('callgrind_control', ['--dump', String(pid)], { stdio: 'ignore' });
  let total: number | null = null;
  for (const file of readdirSync(outDir).filter((name) => name.startsWith(`callgrind.${pid}.out`))) {
    // Each dump has one `totals: <instructions>` line (the event counted is `Ir`).
    const match = /^totals: (\d+)/m.exec(readFileSync(join(outDir, file), 'utf8'));
    if (match) total = (total ?? 0) + Number(match[1]);
  }
  return total;
}

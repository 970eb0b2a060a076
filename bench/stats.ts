/**
 * Benchmark statistics: median [min-max] over runs, and what a server child process used,
 * read from /proc (CPU seconds from `stat`, peak RSS from `status` VmHWM).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/** Median, minimum and maximum of a set of runs. */
export interface Spread {
  /** The middle value (mean of the two middle values for an even count). */
  median: number;
  /** The smallest value. */
  min: number;
  /** The largest value. */
  max: number;
  /** How many runs. */
  runs: number;
}

/** Median [min-max] of `values`; `null` when there are none (a skipped or failed case). */
export function spread(values: readonly number[]): Spread | null {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return null;
  const mid = Math.floor(finite.length / 2);
  const median = finite.length % 2 === 1 ? finite[mid]! : (finite[mid - 1]! + finite[mid]!) / 2;
  return { median, min: finite[0]!, max: finite[finite.length - 1]!, runs: finite.length };
}

/**
 * Median [min-max] of `a[i] / b[i]` over the rounds `i` where both have a figure; `null`
 * when none has. `a` and `b` are two cases' figures per round of the interleaved HTTP runs:
 * within a round the two ran a minute or two apart, so a slow or fast stretch of a shared
 * machine touches both, where the ratio of two medians could take them from different
 * stretches (on a shared virtual machine the baseline alone moves 20-40% between rounds).
 */
export function pairedRatio(a: readonly (number | null)[], b: readonly (number | null)[]): Spread | null {
  const ratios: number[] = [];
  a.forEach((value, round) => {
    const base = b[round];
    if (value !== null && base !== null && base !== undefined && base !== 0) ratios.push(value / base);
  });
  return spread(ratios);
}

let clockTicks: number | null = null;

/** Kernel clock ticks per second (`getconf CLK_TCK`), which /proc/<pid>/stat counts CPU in. */
function ticksPerSecond(): number {
  if (clockTicks === null) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/**
 * User plus system CPU seconds a process has used so far, all its threads included, or
 * `null` when /proc cannot be read (not Linux, or the process has gone).
 */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces, so count fields after its closing paren.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return (utime + stime) / ticksPerSecond();
  } catch {
    return null;
  }
}

/**
 * CPU seconds the processes named `postgres*` on this machine have used so far: the
 * PostgreSQL server's, when it runs here. `null` where /proc cannot be read or holds no
 * such process (a server elsewhere). A process that has exited no longer counts, so read
 * it while the connections being measured are open.
 */
export function postgresCpuSeconds(): number | null {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  let total: number | null = null;
  for (const pid of pids) {
    let name: string;
    try {
      name = readFileSync(`/proc/${pid}/comm`, 'utf8');
    } catch {
      continue; // gone since the listing
    }
    if (!name.startsWith('postgres')) continue;
    const seconds = cpuSeconds(Number(pid));
    if (seconds !== null) total = (total ?? 0) + seconds;
  }
  return total;
}

/** Resident memory of a process, MiB: now (VmRSS) and the peak (VmHWM). */
export interface Rss {
  /** Current resident set, MiB. */
  rssMb: number;
  /** Peak resident set since start or since {@link resetPeakRss}, MiB. */
  peakMb: number;
}

/** Reads VmRSS and VmHWM of `pid`; `null` when /proc cannot be read. */
export function rss(pid: number): Rss | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/**
 * Resets the peak RSS of `pid` to its current RSS (writing 5 to /proc/<pid>/clear_refs), so
 * VmHWM afterwards is the peak of one measured run rather than of the warm-up too. Returns
 * false where the kernel or permissions do not allow it: the peak then covers the warm-up.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

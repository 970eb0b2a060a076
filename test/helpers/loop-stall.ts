/**
 * How long work held the event loop, measured so that a busy machine does not count as the
 * work's own: a 1 ms timer ticks whenever the loop is free, and a gap between two ticks is the
 * loop held (by the work or the collector) or the process put aside by the OS. Two figures
 * bound what the work held in a gap from above: the gap less the collector's pauses in it,
 * and the CPU time the process used in it (the collector's and other threads' included). A
 * gap counts for the smaller; a full collection before the work starts it on a settled heap.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
/** A full collection now (the flag makes `gc` in a new context). */
const collectGarbage = runInNewContext('gc') as () => void;

/** A real timer's wait, for the probe (vitest's fake timers are not used with it). */
const tick = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The longest the event loop was held while `work` ran, ms (see the module's TSDoc). */
export async function longestStall(work: () => Promise<unknown>): Promise<number> {
  collectGarbage();
  const pauses: { start: number; end: number }[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push({ start: entry.startTime, end: entry.startTime + entry.duration });
  });
  observer.observe({ entryTypes: ['gc'] });
  const ticks: { at: number; cpu: number }[] = [];
  const timer = setInterval(() => {
    const { user, system } = process.cpuUsage();
    ticks.push({ at: performance.now(), cpu: (user + system) / 1000 });
  }, 1);
  await tick(10);
  await work();
  await tick(10);
  clearInterval(timer);
  // The observer is told of a collection after it ended: give it a turn.
  await tick(10);
  observer.disconnect();
  let longest = 0;
  for (let i = 1; i < ticks.length; i++) {
    const [from, to] = [ticks[i - 1]!, ticks[i]!];
    const collecting = pauses.reduce((sum, pause) => sum + Math.max(0, Math.min(to.at, pause.end) - Math.max(from.at, pause.start)), 0);
    longest = Math.max(longest, Math.min(to.at - from.at - collecting, to.cpu - from.cpu));
  }
  return longest;
}

/**
 * The best of up to three runs of `run` (each on a storage of its own), tried again only
 * while the stall is at least `bound` and could be noise (under `noNoise`).
 */
export async function bestStall(run: () => Promise<number>, bound: number, noNoise: number): Promise<number> {
  let best = Infinity;
  for (let attempt = 0; attempt < 3 && best >= bound && (attempt === 0 || best < noNoise); attempt++) best = Math.min(best, await run());
  return best;
}

/** The bench's progress lines, each with the seconds since the run started. */
import { startedAt } from './options.js';

/** Prints `line` with the run's elapsed seconds. */
export function log(line: string): void {
  const t = ((Date.now() - startedAt) / 1000).toFixed(0).padStart(4);
  process.stdout.write(`[${t}s] ${line}\n`);
}

/** The machine the bench ran on, and how busy it was before the run. */
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { readFileSync } from 'node:fs';
import { cores } from './pinning.js';

/** Share of all cores busy over `ms`, from /proc/stat: other work on the machine. */
export async function machineBusy(ms: number): Promise<number | null> {
  const sample = () => {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
    const idle = line[3]! + (line[4] ?? 0);
    return { idle, total: line.reduce((a, b) => a + b, 0) };
  };
  try {
    const a = sample();
    await new Promise((done) => setTimeout(done, ms));
    const b = sample();
    return 1 - (b.idle - a.idle) / (b.total - a.total);
  } catch {
    return null;
  }
}

/** The CPU, memory, Node and load average, for the report. */
export function machine(): string[] {
  let model = cpus()[0]?.model ?? 'unknown';
  try {
    model = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? model;
  } catch {
    // Not Linux: os.cpus() named it.
  }
  return [
    `CPU: ${model}, ${cores} cores`,
    `memory: ${(totalmem() / 2 ** 30).toFixed(1)} GiB (${(freemem() / 2 ** 30).toFixed(1)} GiB free at start)`,
    `Node ${process.version}, ${process.platform} ${process.arch}`,
    `load average at start: ${loadavg().map((n) => n.toFixed(2)).join(' ')}`,
  ];
}

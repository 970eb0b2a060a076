/**
 * Pinning: the servers on core 0, this process (the load generator, the DLR receiver, the
 * test SMSC) on core 1. Pinning this process happens when the module is first imported.
 */
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The machine's cores. */
export const cores = cpus().length;
/** The command prefix that pins a server child to core 0, and what was pinned, for the report. */
export const pinning = (() => {
  if (!hasTaskset()) return { server: [] as string[], note: 'taskset not found: servers and load generator are NOT pinned; they share all cores' };
  if (cores < 2) return { server: [] as string[], note: `only ${cores} core: nothing pinned, server and load generator share it` };
  try {
    // -a: every thread this process already has (libuv pool, V8 helpers); later ones inherit.
    execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  } catch (error) {
    return { server: ['taskset', '-c', '0'], note: `servers pinned to core 0 (taskset -c 0); pinning the harness to core 1 failed (${String(error)})` };
  }
  return {
    server: ['taskset', '-c', '0'],
    note: 'servers (and the raw SMPP client and the countSms child) pinned to core 0 with `taskset -c 0`; the harness (autocannon, the DLR receiver) and the test SMSC pinned to core 1 (`taskset -a -p -c 1`)',
  };
})();

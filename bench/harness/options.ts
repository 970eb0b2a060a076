/**
 * The bench's command line (`npm run bench -- --help`), parsed once when this module is
 * first imported: `--help` and a bad option end the process before anything starts.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** When the run started, epoch ms. */
export const startedAt = Date.now();

interface Options {
  quick: boolean;
  filter: string[] | null;
  durationSec: number;
  warmupSec: number;
  runs: number;
  tsx: boolean;
  write: boolean;
  notes: string[];
  /** `--against <git-ref>`: paired runs of the HTTP cases built from that ref and from the working tree. */
  against: string | null;
  /** `--paired`: paired runs of each HTTP case and its baseline. */
  paired: boolean;
  /** `--instructions`: each selected HTTP case's instructions per request, under callgrind (bench/instructions.ts). */
  instructions: boolean;
  /** `--connections <n>`: autocannon's connections for every HTTP case, baselines included (`null`: each case's own). */
  connections: number | null;
}

function parseArgs(argv: readonly string[]): Options {
  let quick = false;
  let filter: string[] | null = null;
  let duration: number | null = null;
  let runs: number | null = null;
  let tsx = false;
  let write: boolean | null = null;
  let against: string | null = null;
  let paired = false;
  let instructions = false;
  let connections: number | null = null;
  const notes: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--quick') quick = true;
    else if (arg === '--case') filter = value().split(',').map((s) => s.trim()).filter(Boolean);
    else if (arg === '--duration') duration = Number(value());
    else if (arg === '--runs') runs = Number(value());
    else if (arg === '--tsx') tsx = true;
    else if (arg === '--write') write = true;
    else if (arg === '--no-write') write = false;
    else if (arg === '--note') notes.push(value());
    else if (arg === '--against') against = value();
    else if (arg === '--paired') paired = true;
    else if (arg === '--instructions') instructions = true;
    else if (arg === '--connections') connections = Number(value());
    else if (arg === '--help' || arg === '-h') {
      console.log('usage: npm run bench -- [--quick] [--case a,b] [--duration s] [--runs n] [--tsx] [--write|--no-write] [--note text] [--connections n] [--against <git-ref> | --paired | --instructions]');
      process.exit(0);
    } else throw new Error(`unknown option ${arg} (try --help)`);
  }
  if (duration !== null && !(duration > 0)) throw new Error('--duration must be a positive number of seconds');
  if (runs !== null && !(Number.isInteger(runs) && runs > 0)) throw new Error('--runs must be a positive integer');
  if (connections !== null && !(Number.isInteger(connections) && connections > 0)) throw new Error('--connections must be a positive integer');
  if ([against !== null, paired, instructions].filter(Boolean).length > 1) throw new Error('--against, --paired and --instructions are three different comparisons: pick one');
  if ((against !== null || paired) && tsx) throw new Error('--against and --paired compare bundles: drop --tsx');
  const comparing = against !== null || paired || instructions;
  return {
    quick,
    filter,
    durationSec: duration ?? (quick ? 3 : comparing ? 5 : 8),
    warmupSec: quick ? 1 : 2,
    runs: runs ?? (quick ? 1 : instructions ? 2 : comparing ? 6 : 3),
    tsx,
    write: !comparing && (write ?? (!quick && filter === null && duration === null && runs === null && connections === null)),
    notes,
    against,
    paired,
    instructions,
    connections,
  };
}

/** This run's options. */
export const options = parseArgs(process.argv.slice(2));

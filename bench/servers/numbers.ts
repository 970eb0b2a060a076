/**
 * One run of the recipient-stage benchmark (bench/numbers.ts) in a process of its own,
 * pinned by the harness like the servers: a fresh heap, no load generator beside it.
 * BENCH_ROUNDS paired rounds (default 21). Prints one JSON line
 * `{ event: 'done', ...NumbersBenchResult }` and exits.
 */
import { benchNumbers } from '../numbers.js';

const result = benchNumbers({ rounds: Number(process.env.BENCH_ROUNDS ?? 21) });
process.stdout.write(`${JSON.stringify({ event: 'done', ...result })}\n`);

/**
 * One run of the `countSms` benchmark in a process of its own, pinned by the harness like
 * the servers: a fresh heap, no load generator beside it. BENCH_RUNS timed passes (default
 * 5). Prints one JSON line `{ event: 'done', ...CountSmsBenchResult }` and exits.
 */
import { benchCountSms } from '../count-sms.js';

const result = await benchCountSms({ runs: Number(process.env.BENCH_RUNS ?? 5) });
process.stdout.write(`${JSON.stringify({ event: 'done', ...result })}\n`);

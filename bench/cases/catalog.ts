/**
 * Every case of the bench by family (HTTP throughput, the storage alone, fair queues, and
 * the others by name), and the ones `--case` selected, with the baselines and storage
 * ceilings they are compared with.
 */
import { FEATURES_CASE, IDEMPOTENCY_CASE, SQLITE_IDEMPOTENCY_CASE } from '../idempotency.js';
import { options } from '../harness/options.js';
import type { ServerScript } from '../harness/servers.js';

/** An HTTP throughput case. */
export interface HttpCase {
  name: string;
  title: string;
  script: ServerScript;
  perRequest: number;
  connections: number;
  baseline?: string;
  /** Extra environment for the server (BENCH_RATE_LIMIT=off, say). */
  env?: Record<string, string>;
  /** Every request with an `Idempotency-Key` of its own (bench/idempotency.ts). */
  idempotencyKeys?: boolean;
  /** One request in `scheduleEvery` sends its messages with a `send_at` a minute ahead. */
  scheduleEvery?: number;
}

/**
 * The HTTP cases. A case and its baseline always run with the same number of connections:
 * 16 for one-message bodies and 8 for 100-message bodies unless `--connections` sets one
 * count for all (see docs/sqlite.md#performance for why SQLite's ratio depends on it).
 */
export const HTTP_CASES: HttpCase[] = ([
  { name: 'baseline-1', title: 'bare Express 5 + express.json(), one-message body, answers a one-item array', script: 'baseline', perRequest: 1, connections: 16 },
  { name: 'memory-1', title: 'quick send, 1 message/request, memory storage, simulator carrier, worker running', script: 'memory', perRequest: 1, connections: 16, baseline: 'baseline-1' },
  { name: 'memory-1-nolimits', title: 'memory-1 with `rateLimit: false`: the cost of the three limiters is 1 - memory-1 / this', script: 'memory', perRequest: 1, connections: 16, baseline: 'baseline-1', env: { BENCH_RATE_LIMIT: 'off' } },
  { name: 'memory-1-untraced', title: 'memory-1 with `tracing: false`: against memory-1 (OpenTelemetry\'s API installed, no provider registered), the cost of the tracing hooks when nothing records', script: 'memory', perRequest: 1, connections: 16, baseline: 'memory-1', env: { BENCH_TRACING: 'off' } } as HttpCase,
  IDEMPOTENCY_CASE,
  { name: 'sqlite-1', title: 'quick send, 1 message/request, SQLite (temp file, default synchronous=FULL)', script: 'sqlite', perRequest: 1, connections: 16, baseline: 'baseline-1' },
  SQLITE_IDEMPOTENCY_CASE,
  FEATURES_CASE,
  { name: 'postgres-1', title: 'quick send, 1 message/request, PostgreSQL (fresh schema, pool of 20)', script: 'postgres', perRequest: 1, connections: 16, baseline: 'baseline-1' },
  { name: 'mysql-1', title: 'quick send, 1 message/request, MariaDB record store (fresh tables, pool of 20)', script: 'mysql', perRequest: 1, connections: 16, baseline: 'baseline-1' },
  { name: 'baseline-100', title: 'bare Express 5 baseline fed the 100-message body, answers a 100-item array', script: 'baseline', perRequest: 100, connections: 8 },
  { name: 'memory-100', title: 'quick send, 100 messages/request, memory storage', script: 'memory', perRequest: 100, connections: 8, baseline: 'baseline-100' },
  { name: 'sqlite-100', title: 'quick send, 100 messages/request, SQLite', script: 'sqlite', perRequest: 100, connections: 8, baseline: 'baseline-100' },
  { name: 'postgres-100', title: 'quick send, 100 messages/request, PostgreSQL', script: 'postgres', perRequest: 100, connections: 8, baseline: 'baseline-100' },
  { name: 'mysql-100', title: 'quick send, 100 messages/request, MariaDB record store', script: 'mysql', perRequest: 100, connections: 8, baseline: 'baseline-100' },
] satisfies HttpCase[]).map((c) => ({ ...c, connections: options.connections ?? c.connections }));

/**
 * The storage alone, the ceiling of the case it comes with: `store-insert` children store
 * what a 100-message case accepts, `store-life` children take messages through the storage
 * calls of their whole lives, as an end-to-end case does.
 */
export const STORE_CASES = [
  { name: 'store-sqlite-100', with: 'sqlite-100', script: 'sqlite', child: 'store-insert', what: 'SQLite (temp file, synchronous=FULL)' },
  { name: 'store-postgres-100', with: 'postgres-100', script: 'postgres', child: 'store-insert', what: 'PostgreSQL (fresh schema, pool of 20)' },
  { name: 'life-sqlite', with: 'e2e-sqlite', script: 'sqlite', child: 'store-life', what: 'SQLite (temp file, synchronous=FULL)' },
  { name: 'life-postgres', with: 'e2e-postgres', script: 'postgres', child: 'store-life', what: 'PostgreSQL (fresh schema, pool of 20)' },
] as const;

/**
 * Fair queues and priority: each a script of bench/ run in a child (see
 * {@link scriptCase}), which prints its figures as the last JSON line on stdout.
 */
export const FAIR_CASES = [
  { name: 'fairness-sqlite', script: 'fairness.ts', args: ['sqlite'], kind: 'fairness', storage: 'SQLite' },
  { name: 'fairness-postgres', script: 'fairness.ts', args: ['postgres'], kind: 'fairness', storage: 'PostgreSQL, two instances' },
  { name: 'priority-sqlite', script: 'fairness.ts', args: ['sqlite', '--priority'], kind: 'priority', storage: 'SQLite' },
  { name: 'claim-sqlite', script: 'claim-sqlite.ts', args: ['--claims-only'], kind: 'claim', storage: 'SQLite' },
  { name: 'claim-postgres', script: 'claim-postgres.ts', args: ['--claims-only'], kind: 'claim', storage: 'PostgreSQL' },
] as const;

/** The message list: bench/list.ts for each storage, one page timed with 1,000,000 messages stored. */
export const LIST_CASES = [
  { name: 'list-sqlite', arg: 'sqlite', storage: 'SQLite' },
  { name: 'list-postgres', arg: 'postgres', storage: 'PostgreSQL' },
] as const;

const OTHER_CASES = ['e2e-simulator', 'e2e-sqlite', 'e2e-postgres', 'smpp-raw', 'smpp-raw-pinned', 'e2e-smpp', 'smpp-binds', 'count-sms', 'numbers', 'rss-sqlite', ...STORE_CASES.map((c) => c.name), ...FAIR_CASES.map((c) => c.name), ...LIST_CASES.map((c) => c.name)] as const;

/** Whether `--case` selected the case `name`. */
export function selected(name: string): boolean {
  if (options.filter === null) return true;
  // `=name` selects that case alone; a plain value, every case whose name contains it.
  return options.filter.some((f) => (f.startsWith('=') ? name === f.slice(1) : name.includes(f)));
}

/** The HTTP cases to run, with their baselines, in catalog order. */
export const httpSelected = HTTP_CASES.filter((c) => selected(c.name));
// A case's baseline always runs with it, so every ratio is within one run.
for (const c of [...httpSelected]) {
  const base = c.baseline === undefined ? undefined : HTTP_CASES.find((b) => b.name === c.baseline);
  if (base && !httpSelected.includes(base)) httpSelected.unshift(base);
}
httpSelected.sort((a, b) => HTTP_CASES.indexOf(a) - HTTP_CASES.indexOf(b));
/** The other cases to run, by name, with the SMPP raw rates and storage ceilings they are compared with. */
export const otherSelected = new Set<string>(OTHER_CASES.filter((c) => selected(c)));
if (otherSelected.has('e2e-smpp')) {
  otherSelected.add('smpp-raw');
  otherSelected.add('smpp-raw-pinned');
}
for (const store of STORE_CASES) {
  if (httpSelected.some((c) => c.name === store.with) || otherSelected.has(store.with)) otherSelected.add(store.name);
}

/**
 * The `Idempotency-Key` cases: quick send of one message, every request with a key of its
 * own (so each is a first request: a lookup, a hash of the body, a record stored with the
 * message), against the same server fed the same body without the header, in the same run.
 * The target (the header costs under 5% of req/s) is read on SQLite, the durable default,
 * where a provider relies on the key; the memory case is reported beside it.
 *
 * `npm run bench -- --case =memory-1-idempotency` runs it with its baseline (3 rounds);
 * `--paired` gives the mean of the per-pair ratios, and `--instructions` the instructions per
 * request under callgrind, the steadiest figure on a noisy machine (1.03x-1.05x of memory-1
 * when the case was written).
 */
import type autocannon from 'autocannon';

/** The case on memory storage, as bench/cases/catalog.ts registers its HTTP cases: where the rest of a request costs least. */
export const IDEMPOTENCY_CASE = {
  name: 'memory-1-idempotency',
  title: 'memory-1 with an `Idempotency-Key` of its own on every request: the cost of the header is 1 - this / memory-1',
  script: 'memory',
  perRequest: 1,
  connections: 16,
  baseline: 'memory-1',
  idempotencyKeys: true,
} as const;

/** The same on SQLite, the embedded default: the key's record is a row in each request's transaction. */
export const SQLITE_IDEMPOTENCY_CASE = {
  name: 'sqlite-1-idempotency',
  title: 'sqlite-1 with an `Idempotency-Key` of its own on every request: the cost of the header is 1 - this / sqlite-1',
  script: 'sqlite',
  perRequest: 1,
  connections: 16,
  baseline: 'sqlite-1',
  idempotencyKeys: true,
} as const;

/**
 * Every feature in use at once on SQLite, against sqlite-1 (no feature) in the same run: an
 * `Idempotency-Key` on every request, the storage's credit ledger charging each request, a
 * profile that honours opt-outs with 100,000 numbers on the list (none of them a bench
 * recipient, so the lookup is paid and nothing is refused), and one request in ten
 * scheduled a minute ahead. The server side is set by BENCH_FEATURES=all
 * (bench/servers/router-host.ts).
 */
export const FEATURES_CASE = {
  name: 'sqlite-1-features',
  title: 'sqlite-1 with every feature in use (key header, credit, 100,000 opt-outs, 1 in 10 scheduled): their cost is 1 - this / sqlite-1',
  script: 'sqlite',
  perRequest: 1,
  connections: 16,
  baseline: 'sqlite-1',
  idempotencyKeys: true,
  scheduleEvery: 10,
  env: { BENCH_FEATURES: 'all' },
} as const;

/** The target's text in the report. */
export const IDEMPOTENCY_TARGET = 'Idempotency-Key adds < 5% to quick send, 1 msg, SQLite (req/s with vs without)';

/**
 * autocannon's `requests` for a load whose every request carries a new `Idempotency-Key`
 * (`<prefix>-<n>`): the key changes per request, the body stays the one given, except that
 * with `scheduled`, every `scheduled.every`-th request sends `scheduled.body` instead.
 */
export function keyedRequests(prefix: string, scheduled?: { body: string; every: number }): autocannon.Request[] {
  let n = 0;
  return [
    {
      setupRequest: (request) => {
        const i = n++;
        request.headers = { ...request.headers, 'idempotency-key': `${prefix}-${i.toString(36)}` };
        if (scheduled !== undefined && i % scheduled.every === 0) request.body = scheduled.body;
        return request;
      },
    },
  ];
}

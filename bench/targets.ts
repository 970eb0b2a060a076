/** The targets each run is judged by, and what limits each figure, for the report. */
import { caseRatio, formatSpread, times, type CaseResult, type TargetVerdict } from './report.js';
import { IDEMPOTENCY_TARGET, SQLITE_IDEMPOTENCY_CASE } from './idempotency.js';
import { options } from './harness/options.js';
import { E2E_MESSAGES } from './cases/e2e.js';
import { FAIR_TPS, fairTargets } from './cases/fair.js';
import { listTargets } from './cases/list.js';
import { RSS_TARGET } from './cases/rss.js';

/** Each target, met or not, from the cases of this run. */
export function verdicts(cases: CaseResult[], rssOutcome: { accepted: number; rssMb: number | null } | null): TargetVerdict[] {
  const get = (name: string) => cases.find((c) => c.name === name);
  const median = (c: CaseResult | undefined, key: 'requestsPerSec' | 'messagesPerSec' | 'p99Ms' | 'cpuSec') => c?.[key]?.median ?? null;
  const why = (c: CaseResult | undefined, name: string) => (c === undefined ? `${name} not run (filtered out)` : c.skipped !== undefined ? `${name} skipped: ${c.skipped}` : `${name} has no figure`);
  const list: TargetVerdict[] = [];
  // Ratios are taken round by round (caseRatio): the verdict goes by their median, and the
  // text gives their range and the two cases' medians beside it.
  const ratioTarget = (target: string, name: string, baseName: string, key: 'requestsPerSec' | 'p99Ms', want: (r: number) => boolean) => {
    const c = get(name);
    const b = get(baseName);
    const r = caseRatio(c, b, key);
    const v = median(c, key);
    const bv = median(b, key);
    if (r === null || v === null || bv === null) {
      list.push({ target, measured: v === null ? why(c, name) : why(b, baseName), verdict: 'not measured' });
      return;
    }
    const unit = key === 'p99Ms' ? 'ms p99' : 'req/s';
    const digits = key === 'p99Ms' ? 1 : 0;
    list.push({ target, measured: `${formatSpread(r, times)}${r.runs > 1 ? ' by round' : ''} (medians ${v.toFixed(digits)} vs ${bv.toFixed(digits)} ${unit})`, verdict: want(r.median) ? 'met' : 'not met' });
  };
  /** `ceiling`: a case measuring what bounds this one (the storage alone), shown beside it; or `beside`, any such text. */
  const absTarget = (target: string, name: string, min: number, ceiling?: string, besideText?: string) => {
    const c = get(name);
    const v = median(c, 'messagesPerSec');
    const bound = ceiling === undefined ? null : median(get(ceiling), 'messagesPerSec');
    const beside = bound === null ? (besideText === undefined ? '' : ` (${besideText})`) : ` (the storage alone, ${ceiling}: ${Math.round(bound).toLocaleString('en-US')} msg/s)`;
    if (v === null) list.push({ target, measured: why(c, name), verdict: 'not measured' });
    else list.push({ target, measured: `${Math.round(v).toLocaleString('en-US')} msg/s${beside}`, verdict: v >= min ? 'met' : 'not met' });
  };
  ratioTarget('quick send, 1 msg, memory: >= 0.9x baseline req/s', 'memory-1', 'baseline-1', 'requestsPerSec', (r) => r >= 0.9);
  ratioTarget('quick send, 1 msg, memory: p99 <= 1.2x baseline', 'memory-1', 'baseline-1', 'p99Ms', (r) => r <= 1.2);
  {
    // The three limiters (failed-auth check, per-key request limit, message budget).
    const target = 'rate limiters add < 5% to quick send, 1 msg, memory (req/s with vs without)';
    const on = median(get('memory-1'), 'requestsPerSec');
    const off = median(get('memory-1-nolimits'), 'requestsPerSec');
    const r = caseRatio(get('memory-1'), get('memory-1-nolimits'), 'requestsPerSec');
    if (r === null || on === null || off === null) list.push({ target, measured: on === null ? why(get('memory-1'), 'memory-1') : why(get('memory-1-nolimits'), 'memory-1-nolimits'), verdict: 'not measured' });
    else {
      // The cost is 1 - (with / without), round by round: its median, and its range.
      const cost = (x: number) => `${((1 - x) * 100).toFixed(1)}%`;
      const range = r.runs > 1 ? ` [${cost(r.max)} to ${cost(r.min)} by round]` : '';
      list.push({ target, measured: `${cost(r.median)}${range} (medians ${Math.round(on)} vs ${Math.round(off)} req/s)`, verdict: 1 - r.median < 0.05 ? 'met' : 'not met' });
    }
  }
  {
    // The Idempotency-Key header (a lookup, a hash, a record stored with the message) on the
    // embedded durable default, where a key is a row in the request's transaction.
    const on = median(get(SQLITE_IDEMPOTENCY_CASE.name), 'requestsPerSec');
    const off = median(get('sqlite-1'), 'requestsPerSec');
    const r = caseRatio(get(SQLITE_IDEMPOTENCY_CASE.name), get('sqlite-1'), 'requestsPerSec');
    if (r === null || on === null || off === null) list.push({ target: IDEMPOTENCY_TARGET, measured: on === null ? why(get(SQLITE_IDEMPOTENCY_CASE.name), SQLITE_IDEMPOTENCY_CASE.name) : why(get('sqlite-1'), 'sqlite-1'), verdict: 'not measured' });
    else {
      const cost = (x: number) => `${((1 - x) * 100).toFixed(1)}%`;
      const range = r.runs > 1 ? ` [${cost(r.max)} to ${cost(r.min)} by round]` : '';
      list.push({ target: IDEMPOTENCY_TARGET, measured: `${cost(r.median)}${range} (medians ${Math.round(on)} vs ${Math.round(off)} req/s)`, verdict: 1 - r.median < 0.05 ? 'met' : 'not met' });
    }
  }

  ratioTarget('quick send, 1 msg, SQLite: >= 0.8x baseline req/s', 'sqlite-1', 'baseline-1', 'requestsPerSec', (r) => r >= 0.8);
  absTarget('100 msgs/request, SQLite: >= 100,000 msg/s', 'sqlite-100', 100_000, 'store-sqlite-100');
  absTarget('100 msgs/request, PostgreSQL: >= 50,000 msg/s', 'postgres-100', 50_000, 'store-postgres-100');
  {
    // What 5,000 msg/s leaves per message on this core, against what the library alone takes.
    const usPerMessage = (name: string) => {
      const cpu = median(get(name), 'cpuSec');
      return cpu === null ? null : Math.round((cpu * 1e6) / E2E_MESSAGES);
    };
    const raw = usPerMessage('smpp-raw-pinned');
    const gateway = usPerMessage('e2e-smpp');
    const beside = raw === null || gateway === null ? undefined : `CPU per message: the gateway ${gateway} us, the raw client alone ${raw} us; 5,000 msg/s leaves 200`;
    absTarget('end to end, SMPP: >= 5,000 msg/s', 'e2e-smpp', 5_000, undefined, beside);
  }
  {
    // Compared with the faster of the two raw figures, so the verdict is never flattered
    // by a raw client that shared its core with the SMSC.
    const e = get('e2e-smpp');
    const v = median(e, 'messagesPerSec');
    const raws = ['smpp-raw', 'smpp-raw-pinned'].map((n) => ({ n, v: median(get(n), 'messagesPerSec') })).filter((r) => r.v !== null && r.v > 0);
    const best = raws.sort((a, b) => b.v! - a.v!)[0];
    const target = 'end to end, SMPP: >= 0.5x raw smpp library';
    if (v === null || best === undefined) list.push({ target, measured: v === null ? why(e, 'e2e-smpp') : why(get('smpp-raw-pinned'), 'smpp-raw-pinned'), verdict: 'not measured' });
    else list.push({ target, measured: `${(v / best.v!).toFixed(2)}x (${Math.round(v)} vs ${Math.round(best.v!)} msg/s of ${best.n})`, verdict: v / best.v! >= 0.5 ? 'met' : 'not met' });
  }
  {
    const target = 'RSS < 200 MB after 1,000,000 messages on SQLite';
    const c = get('rss-sqlite');
    if (!rssOutcome || rssOutcome.rssMb === null) list.push({ target, measured: why(c, 'rss-sqlite'), verdict: 'not measured' });
    else {
      const measured = `${rssOutcome.rssMb.toFixed(0)} MiB after ${rssOutcome.accepted.toLocaleString('en-US')} messages`;
      if (rssOutcome.accepted < RSS_TARGET) {
        list.push({ target, measured: `${measured} (fewer than 1,000,000 within the time bound)`, verdict: rssOutcome.rssMb >= 200 ? 'not met' : 'not measured' });
      } else list.push({ target, measured, verdict: rssOutcome.rssMb * 1.048576 < 200 ? 'met' : 'not met' });
    }
  }
  absTarget('countSms: >= 1,000,000 msg/s', 'count-sms', 1_000_000);
  {
    // The recipient check of new numbers against the CPU a request of the memory case takes
    // (its core's busy share over its requests per second), issue 44's budget.
    const numbers = get('numbers');
    const perSecond = median(numbers, 'messagesPerSec');
    for (const [count, name, budget] of [[1, 'memory-1', 0.05], [100, 'memory-100', 0.1]] as const) {
      const target = `recipient check of ${count} new number${count === 1 ? '' : 's'}: <= ${budget * 100}% of a ${name} request's CPU`;
      const c = get(name);
      const busy = c?.coreBusy?.median ?? null;
      const rate = median(c, 'requestsPerSec');
      if (perSecond === null || busy === null || rate === null || rate === 0) {
        list.push({ target, measured: perSecond === null ? why(numbers, 'numbers') : why(c, name), verdict: 'not measured' });
        continue;
      }
      const checkUs = (count * 1e6) / perSecond;
      const requestUs = (busy * 1e6) / rate;
      const share = checkUs / requestUs;
      list.push({ target, measured: `${(share * 100).toFixed(1)}% (${checkUs.toFixed(1)} us of ${requestUs.toFixed(0)} us)`, verdict: share <= budget ? 'met' : 'not met' });
    }
  }
  fairTargets(cases, list, why);
  listTargets(cases, list, why);
  return list;
}

/** What limits each figure: fixed knowledge of the setup plus what this run's CPU figures show. */
export function limits(cases: CaseResult[]): string[] {
  const lines = [
    `All HTTP cases: one pinned server core against one load-generator core; autocannon (${options.connections === null ? '16 connections for 1-message bodies, 8 for 100-message bodies' : `${options.connections} connections for every case, set by --connections`}, no pipelining) shares core 1 with nothing else. Where "server core busy" is near 100% the figure is the server's CPU; well below 100% means the server waited (disk sync, database, or the load generator).`,
    'baseline-*: Express 5 routing, express.json() and res.json() on one core - the ceiling any Express middleware can reach.',
    'memory-* / sqlite-* / postgres-*: the router\'s request path (key check, body parse, ajv validation, countSms, storage insert, response) plus its worker submitting to the simulator on the same core, as in production: the worker competes with requests for the one core.',
    'sqlite-*: each request is one transaction; with the default synchronous=FULL every commit waits for fsync of the WAL, so disk latency bounds req/s when the core is not saturated.',
    'postgres-*: each request is one transaction over TCP to the local PostgreSQL server, which runs unpinned and may share core 0 with the router; its commit (WAL flush) and round trips bound the figure.',
    'e2e-*: time from the first send request to the last delivery report received; bounded by the worker (64 submissions at the carrier, 256 messages held, 250 ms idle poll), the carrier round trip, and the dispatcher (64 reports in flight, 32 per receiver host in the bench router, default 8: the single local receiver is one host), all on the server core.',
    'e2e-sqlite / e2e-postgres: the same through a durable storage, where every step of a message (insert, submission, receipt, report attempt) is committed on its way: the rate the gateway sustains with that storage; PostgreSQL runs unpinned on the same two cores.',
    'smpp-raw / smpp-raw-pinned: the `smpp` library with a window of 50 and no storage; against the quiet test SMSC (a child on core 1 that prints nothing per message: a line per message, parsed by the harness, would cap the raw rate near 3,900 msg/s). smpp-raw runs the client in the harness on core 1 beside its own SMSC, so the two share that core; smpp-raw-pinned runs it on core 0 as the router runs, and its CPU per message (beside the case) is the library\'s own cost on that core with its texts given as strings (the adapter hands it encoded bytes and writes a turn\'s PDUs at once); the SMPP ratio target uses the faster of the two. e2e-smpp\'s CPU per message, beside it, is the whole gateway\'s: request, storage, worker, the SMPP exchange and the report\'s POST.',
    'store-*-100: the storage adapter alone in a child pinned to core 0, storing what sqlite-100 / postgres-100 store (100-message batches, 8 at a time) with nothing else in the process: the most those cases could accept on that storage if the request path and the worker cost nothing. SQLite\'s figure is its inserts (every message row, its ref, its reference and its claim index entries) and its commits, each waiting for fsync; PostgreSQL\'s is the server, unpinned, inserting the rows.',
    'life-*: the storage adapter alone in a child pinned to core 0, taking messages through the storage calls of their lives as the router and its worker make them (stored leased to the instance, submissions, receipts storing the report leased to the instance (no claim, as the router does), the attempt recorded), 100 at a time from 8 callers: the most e2e-sqlite / e2e-postgres could finish on that storage if HTTP, the carrier and the reports\' POSTs cost nothing. PostgreSQL runs unpinned; its CPU per message (all its processes, from /proc) is beside the case.',
    'count-sms: pure CPU in a fresh child pinned to core 0 while core 1 idles; the corpus is 100,000 deterministic mixed GSM-7/UCS-2 texts of 1-5 parts. A fresh child gives a steadier figure than the harness process, where the same code measured 0.6-1.4M msg/s depending on what ran before it.',
    'numbers: pure CPU in a fresh child pinned to core 0; each round reads 2,000 mobiles of six countries never read before, by libphonenumber-js\'s parser and by the compiled patterns in turn (the order swapped every round), so both see the same machine. Its share of a request is set against memory-1 / memory-100 of the same run, whose CPU per request includes the worker\'s.',
    `fairness-* / priority-sqlite: the router (or, on PostgreSQL, two routers on one schema in one process), the HTTP client and the test SMSC child, all pinned to core 0, run with tsx; the carrier's ${FAIR_TPS} submits a second bound the drain (the adapter paces its bind), and B's delay is the wait for a carrier slot plus the claim, the submit and its recording. priority-sqlite's SMSC reports every submit so that the order the carrier received them in is counted where it happened.`,
    'claim-*: the storage alone in a child pinned to core 0 (PostgreSQL unpinned), synchronous=FULL for SQLite; the figure is the wall time of one claim (select, lease, read the records), so disk and, for PostgreSQL, the server and its round trips bound it. One run: loading the two backlogs of 1,000,000 takes most of the case.',
    'rss-sqlite: RSS (VmRSS) of the server read right after the last accepted request; the worker is still draining the backlog, so RSS includes its in-flight state. Its req/s is coarse: autocannon notices that a fixed count of requests is done on its one-second tick, so the duration it reports is a whole number of seconds.',
  ];
  for (const c of cases) {
    if (c.coreBusy && c.coreBusy.median < 0.85 && c.name !== 'count-sms' && c.name !== 'numbers') {
      lines.push(`this run: ${c.name} kept the server core only ${Math.round(c.coreBusy.median * 100)}% busy, so its figure is bounded by waiting (disk, database, other work on the machine, or the load generator), not by the server's own CPU.`);
    }
  }
  return lines;
}

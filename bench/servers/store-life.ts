/**
 * The storage's worker steps alone: how many messages a second the storage adapter of
 * BENCH_STORE (`sqlite` or `postgres`, opened as the router servers open it) takes through
 * a whole life when nothing else runs in the process: no HTTP, no carrier, no report sent.
 * It is the ceiling of the end-to-end case on that storage, measured in the same run: what
 * the gateway could finish on one core if the request path, the carrier and the report's
 * POST cost nothing.
 *
 * A message's life is the storage calls the router and its worker make for it, in their
 * order: stored (leased to this instance, as the router stores what its worker has room
 * for), each part's submission recorded, each part's receipt applied (the message ends
 * and its report is created, leased to the caller as the router's receipts lease it), its
 * attempt recorded as delivered (a report the adapter did not lease is claimed first).
 * BENCH_CONCURRENCY callers (default 8) each take BENCH_PER_CALL messages (default 100)
 * through their lives at a time, each step's calls made at once as the worker makes them,
 * for BENCH_WARMUP_SEC and then BENCH_SECONDS measured. Prints one JSON line `{ event:
 * 'done', messages, seconds, cpuSec, databaseCpuSec }` and exits; `databaseCpuSec` is
 * PostgreSQL's (all its processes on this machine), `null` for SQLite or a server elsewhere.
 */
import { outcome } from '../../src/lifecycle/states.js';
import { postgresCpuSeconds } from '../stats.js';
import { report } from './host.js';
import { benchMessages, openBenchStorage, storeBenchSettings } from './storages.js';

const { kind, concurrency, perCall, warmupMs, measuredMs } = storeBenchSettings();

// Reports are created for a URL nobody calls: the life ends with the attempt recorded.
const batch = benchMessages(perCall, `bench-life-${kind}`, 'http://127.0.0.1:9/dlr');
const delivered = outcome('delivered', 'delivered_to_terminal');
const databaseCpu = kind === 'postgres' ? postgresCpuSeconds : () => null;

const { storage, after } = await openBenchStorage(kind);
try {
  await storage.ready?.();
  const measureFrom = Date.now() + warmupMs;
  const stopAt = measureFrom + measuredMs;
  let finished = 0;
  let cpuAtStart: NodeJS.CpuUsage | null = null;
  let databaseAtStart: number | null = null;
  let carrierIds = 0;
  const caller = async (callerIndex: number) => {
    const owner = `bench-life-${callerIndex}`;
    for (let now = Date.now(); now < stopAt; now = Date.now()) {
      if (now >= measureFrom && cpuAtStart === null) {
        cpuAtStart = process.cpuUsage();
        databaseAtStart = databaseCpu();
      }
      const messages = batch();
      await storage.insertMessages(messages, { owner, until: now + 60_000 });
      const parts = messages.flatMap((message) =>
        Array.from({ length: message.smsCount }, (_, index) => ({ ref: message.ref, index, carrierId: `life-${carrierIds++}` })),
      );
      await Promise.all(parts.map((part) => storage.recordSubmission(part.ref, part.index, part.carrierId, Date.now())));
      const receipts = await Promise.all(
        parts.map((part) => {
          const at = Date.now();
          return storage.applyReceipt({ carrierIds: [part.carrierId], outcome: delivered, now: at, reportLease: { owner, until: at + 60_000 } });
        }),
      );
      // The reports stored leased to this caller are sent without a claim, as the router
      // sends them; an adapter that does not lease them leaves them to the claim.
      const uids = receipts.flatMap((result) => (result.kind === 'terminal' && result.transition.leasedReport !== undefined ? [result.transition.leasedReport.uid] : []));
      if (uids.length < messages.length) {
        const due = await storage.claimCallbacks({ owner, limit: perCall, leaseMs: 60_000, now: Date.now() });
        uids.push(...due.map((report) => report.uid));
      }
      await Promise.all(
        uids.map((uid) =>
          storage.recordCallbackAttempt(uid, { result: 'delivered', statusCode: 200, error: null, nextAttemptAt: null, now: Date.now() }),
        ),
      );
      if (now >= measureFrom) finished += uids.length;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, i) => caller(i)));
  const cpu = process.cpuUsage(cpuAtStart ?? undefined);
  const databaseAtEnd = databaseCpu();
  const seconds = (Date.now() - measureFrom) / 1000;
  process.stdout.write(
    `${JSON.stringify({
      event: 'done',
      messages: finished,
      seconds,
      cpuSec: (cpu.user + cpu.system) / 1e6,
      databaseCpuSec: databaseAtStart === null || databaseAtEnd === null ? null : databaseAtEnd - databaseAtStart,
    })}\n`,
  );
} catch (error) {
  report({ event: 'error', message: String(error) });
} finally {
  await storage.close?.();
  await after();
}

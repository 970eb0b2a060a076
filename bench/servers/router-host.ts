/**
 * Starts the sms-outbox router on a bare Express app with a given storage, as a host
 * would in production: one static key, the default worker and dispatcher running, the
 * simulator carrier kept fast (1-5 ms), or SMPP when BENCH_SMPP_URL is set. Delivery
 * reports may go to loopback only, where the harness's receiver listens. Rate limits run
 * with limits too high to trip. BENCH_FEATURES=all turns on what the features case pays
 * for (bench/idempotency.ts): the storage's credit ledger with a balance that never runs
 * out, and a profile honouring an opt-out list of 100,000 numbers.
 */
import express from 'express';
import { createSmsRouter, SimulatorDelivery, staticKeys, staticProfiles, type DeliveryAdapter, type Storage } from '../../src/index.js';
import { isTerminal } from '../../src/lifecycle/states.js';
import { BENCH_KEY, BENCH_PROFILE, serve } from './host.js';

async function carrier(): Promise<DeliveryAdapter> {
  const url = process.env.BENCH_SMPP_URL;
  if (url === undefined || url === '') return new SimulatorDelivery({ latencyMs: [1, 5], seed: 1 });
  const { SmppDelivery } = await import('../../src/smpp.js');
  return new SmppDelivery({ url });
}

/** How many numbers the features case puts on the opt-out list. */
const OPT_OUTS = 100_000;

/** Mounts the router with `storage`, listens, and closes it (and then `after`) on SIGTERM. */
export async function startRouterServer(storage: Storage, after: () => Promise<void> = async () => undefined): Promise<void> {
  const features = process.env.BENCH_FEATURES === 'all';
  const sms = createSmsRouter({
    verifyKey: staticKeys([{ key: BENCH_KEY, id: 'bench', profiles: [BENCH_PROFILE] }]),
    ...(features ? { resolveProfile: staticProfiles([{ code: BENCH_PROFILE, owners: ['bench'], honourOptOuts: true }]), credit: { ledger: 'storage' as const } } : {}),
    storage,
    delivery: await carrier(),
    // One local receiver takes every report, so it may have more than the default 8 at once.
    dlr: { allowPrivateAddresses: ['127.0.0.0/8'], perHostConcurrency: 32 },
    // The limiters stay on (their cost is part of every request) but can never trip: a
    // benchmark of one key would otherwise measure 429 answers after the first 600 requests.
    // BENCH_RATE_LIMIT=off measures their cost (`npm run bench -- --case memory-1` twice).
    // BENCH_TRACING=off: no tracing hook looks for a provider (the memory-1-untraced case).
    ...(process.env.BENCH_TRACING === 'off' ? { tracing: false } : {}),
    rateLimit: process.env.BENCH_RATE_LIMIT === 'off' ? false : { requests: { limit: 1_000_000_000 }, messages: { limit: 1_000_000_000 } },
  });
  // Errors are counted, not printed per occurrence: a flood of lines would cost CPU.
  let errors = 0;
  sms.on('error', ({ error }) => {
    if (errors++ < 5) process.stderr.write(`sms-outbox error: ${String(error)}\n`);
  });
  // Messages that reached a terminal state: the harness reads it before and after the
  // measured part, so the table shows how fast the worker finished messages beside how fast
  // requests were accepted (a stalled worker makes the accept rate look better than it is).
  let finished = 0;
  sms.on('message.status', ({ message }) => {
    if (isTerminal(message.state)) finished++;
  });
  await sms.ready();
  if (features) {
    await sms.credit!.topUp('bench', 1_000_000_000);
    // Numbers beside the bench's recipients (2547100...), so every lookup is paid and none refuses.
    for (let from = 0; from < OPT_OUTS; from += 1_000) {
      await Promise.all(Array.from({ length: 1_000 }, (_, i) => sms.optOuts.add(BENCH_PROFILE, `2547${String(20_000_000 + from + i)}`)));
    }
  }
  const app = express();
  app.use(sms);
  serve(
    app,
    async () => {
      await sms.close();
      await after();
      if (errors > 0) process.stderr.write(`sms-outbox errors: ${errors}\n`);
    },
    () => finished,
  );
}

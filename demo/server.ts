/**
 * The demo gateway: an Express host with the sms-outbox router, SQLite storage and the
 * simulated carrier (or a real SMSC when SMPP_URL is set). `npm start` runs it.
 *
 * Environment: PORT (default 3000), SMS_API_KEY (generated and printed when unset),
 * SMS_DB (default ./data/sms-outbox.db), SMPP_URL (smpp://user:pass@host:port),
 * SMS_RATE_LIMIT (requests per minute per key, default 600), SMS_SIM_OUTCOMES (the
 * simulator's outcome weights, e.g. `delivered:1`; default a mix of every outcome).
 * PORT=0 picks a free port; the real one is printed.
 *
 * Besides the API it serves a live dashboard at `/` and Prometheus metrics at `/metrics`.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import express from 'express';
import * as promClient from 'prom-client';
import { createSmsRouter, SimulatorDelivery, staticKeys, type DeliveryAdapter, type SimulatorOptions } from '../src/index.js';
import { SqliteStorage } from '../src/sqlite.js';
import { attachEventLog } from './event-log.js';
import { dashboardRoutes } from './dashboard/routes.js';

const port = Number(process.env.PORT ?? 3000);
const generatedKey = process.env.SMS_API_KEY === undefined || process.env.SMS_API_KEY === '';
const apiKey = generatedKey ? randomBytes(18).toString('base64url') : process.env.SMS_API_KEY!;
const dbPath = process.env.SMS_DB ?? './data/sms-outbox.db';
const rateLimit = process.env.SMS_RATE_LIMIT === undefined || process.env.SMS_RATE_LIMIT === '' ? undefined : Number(process.env.SMS_RATE_LIMIT);

/** SMS_SIM_OUTCOMES (`delivered:90,expired:10`) as simulator weights; a bad name stops the demo at start. */
function simulatedOutcomes(): SimulatorOptions['outcomes'] | undefined {
  const given = process.env.SMS_SIM_OUTCOMES;
  if (given === undefined || given === '') return undefined;
  return Object.fromEntries(given.split(',').map((pair) => {
    const [name, weight] = pair.split(':');
    return [name!.trim(), Number(weight ?? 1)];
  }));
}

async function carrier(): Promise<DeliveryAdapter> {
  const url = process.env.SMPP_URL;
  if (url === undefined || url === '') {
    // Mostly delivered, some of each failure, so the demo shows every kind of report.
    return new SimulatorDelivery({
      latencyMs: [200, 1500],
      outcomes: simulatedOutcomes() ?? { delivered: 90, absent_subscriber: 4, delivery_impossible: 2, expired: 2, rejected: 2 },
    });
  }
  const { SmppDelivery } = await import('../src/smpp.js');
  return new SmppDelivery({ url });
}

mkdirSync(dirname(dbPath), { recursive: true });
const storage = new SqliteStorage({ path: dbPath });
// Process metrics beside the gateway's own, all on prom-client's default registry.
promClient.collectDefaultMetrics();
const sms = createSmsRouter({
  verifyKey: staticKeys([{ key: apiKey, id: 'demo', scopes: ['quick', 'premium'], profiles: ['12345', '22021501'] }]),
  storage,
  delivery: await carrier(),
  // A demo: delivery reports may go to this machine, and to nowhere else internal.
  dlr: { allowPrivateAddresses: ['127.0.0.0/8', '::1/128'] },
  // A bad SMS_RATE_LIMIT (not an integer >= 0) stops the demo at start with a TypeError.
  // Every answer shows the quota left (`RateLimit`), so the limit can be watched coming.
  rateLimit: { requests: { limit: rateLimit, windowMs: 60_000 }, headers: 'always' },
  metrics: { client: promClient },
});
attachEventLog(sms);

const app = express();
app.use(sms);
app.use(
  dashboardRoutes({
    sms, storage, apiKey, basePath: '/api/outbox',
    metrics: async () => ({ contentType: promClient.register.contentType, text: await promClient.register.metrics() }),
  }),
);
// A delivery-report receiver, so the quick start can show a report arriving.
app.post('/demo/dlr', express.json(), (req, res) => {
  const report = req.body as { data?: { message_ref?: string; status?: string } };
  console.log(`dlr.received  ${report.data?.message_ref ?? '?'} ${report.data?.status ?? '?'}`);
  res.sendStatus(204);
});

await sms.ready();
const server = app.listen(port, () => {
  // The real port: PORT=0 lets the system pick one (the dashboard test does).
  const { port: listening } = server.address() as AddressInfo;
  console.log(`sms-outbox demo gateway on http://127.0.0.1:${listening} (storage ${dbPath})`);
  console.log(`dashboard on http://127.0.0.1:${listening}/, metrics on /metrics`);
  console.log(generatedKey ? `SMS_API_KEY=${apiKey}   (generated; set SMS_API_KEY to choose one)` : 'SMS_API_KEY from the environment');
  console.log('profile codes: 12345, 22021501');
});

async function shutdown(): Promise<void> {
  server.close();
  await sms.close();
  process.exit(0);
}
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());

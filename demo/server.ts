/**
 * The demo gateway: an Express host with the sms-outbox router, SQLite storage and the
 * simulated carrier (or a real SMSC when SMPP_URL is set). `npm start` runs it.
 *
 * Environment: PORT (default 3000), SMS_API_KEY (generated and printed when unset),
 * SMS_DB (default ./data/sms-outbox.db), SMPP_URL (smpp://user:pass@host:port),
 * SMS_RATE_LIMIT (requests per minute per key, default 600).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import express from 'express';
import { createSmsRouter, SimulatorDelivery, staticKeys, type DeliveryAdapter } from '../src/index.js';
import { SqliteStorage } from '../src/sqlite.js';
import { attachEventLog } from './event-log.js';

const port = Number(process.env.PORT ?? 3000);
const generatedKey = process.env.SMS_API_KEY === undefined || process.env.SMS_API_KEY === '';
const apiKey = generatedKey ? randomBytes(18).toString('base64url') : process.env.SMS_API_KEY!;
const dbPath = process.env.SMS_DB ?? './data/sms-outbox.db';
const rateLimit = process.env.SMS_RATE_LIMIT === undefined || process.env.SMS_RATE_LIMIT === '' ? undefined : Number(process.env.SMS_RATE_LIMIT);

async function carrier(): Promise<DeliveryAdapter> {
  const url = process.env.SMPP_URL;
  if (url === undefined || url === '') {
    // Mostly delivered, some of each failure, so the demo shows every kind of report.
    return new SimulatorDelivery({
      latencyMs: [200, 1500],
      outcomes: { delivered: 90, absent_subscriber: 4, delivery_impossible: 2, expired: 2, rejected: 2 },
    });
  }
  const { SmppDelivery } = await import('../src/smpp.js');
  return new SmppDelivery({ url });
}

mkdirSync(dirname(dbPath), { recursive: true });
const sms = createSmsRouter({
  verifyKey: staticKeys([{ key: apiKey, id: 'demo', scopes: ['quick', 'premium'], profiles: ['12345', '22021501'] }]),
  storage: new SqliteStorage({ path: dbPath }),
  delivery: await carrier(),
  // A demo: delivery reports may go to this machine, and to nowhere else internal.
  dlr: { allowPrivateAddresses: ['127.0.0.0/8', '::1/128'] },
  // A bad SMS_RATE_LIMIT (not an integer >= 0) stops the demo at start with a TypeError.
  rateLimit: { requests: { limit: rateLimit, windowMs: 60_000 } },
});
attachEventLog(sms);

const app = express();
app.use(sms);
// A delivery-report receiver, so the quick start can show a report arriving.
app.post('/demo/dlr', express.json(), (req, res) => {
  const report = req.body as { data?: { message_ref?: string; status?: string } };
  console.log(`dlr.received  ${report.data?.message_ref ?? '?'} ${report.data?.status ?? '?'}`);
  res.sendStatus(204);
});

await sms.ready();
const server = app.listen(port, () => {
  console.log(`sms-outbox demo gateway on http://127.0.0.1:${port} (storage ${dbPath})`);
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

/**
 * The demo gateway: an Express host with the sms-outbox router, SQLite storage and the
 * simulated carrier (or a real SMSC when SMPP_URL is set). `npm start` runs it.
 *
 * Environment: PORT (default 3000), HOST (the address to listen on, default 127.0.0.1: this
 * machine only, because the page at `/` carries the API key), SMS_ALLOWED_HOSTS (Host header
 * names to answer besides the listening address's: comma-separated), SMS_API_KEY (when
 * unset, one generated at the first start and kept beside the database, in `<SMS_DB>.key`),
 * SMS_DB (default ./data/sms-outbox.db), SMPP_URL (smpp://user:pass@host:port),
 * SMPP_ROUTES (carriers by recipient prefix: `25470,25471=smpp://...;*=smpp://...`),
 * SMS_RATE_LIMIT (requests per minute per key, default 600), SMS_SIM_OUTCOMES (the
 * simulator's outcome weights, e.g. `delivered:1`; default a mix of every outcome), SMS_CREDIT
 * (the demo key's credit in SMS units: each send is charged, refused 402 when short; topped
 * up to this at start; unset: sends cost nothing), SMS_SMART_ENCODING=1 (smart encoding on
 * the demo's profiles), SMS_PROFILES (the profiles the demo key owns, with their senders:
 * `12345:ACME,22021501`; default `12345,22021501`; see demo/sms-profiles.ts).
 * PORT=0 picks a free port; the real one is printed. Subscribers' replies (MO) to the demo's
 * profiles are forwarded to its own `/demo/inbound`, which logs each one; with the simulated
 * carrier, `POST /demo/mo` sends one.
 *
 * Besides the API it serves the package's operator console at `/console/` (sms-outbox/dashboard,
 * behind the demo's key; `/` opens it) and Prometheus metrics at `/metrics`.
 */
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { BlockList, type AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import express from 'express';
import * as promClient from 'prom-client';
import { createSmsRouter, SimulatorDelivery, staticKeys, staticProfiles, type DeliveryAdapter, type SimulatorOptions } from '../src/index.js';
import { SqliteStorage } from '../src/sqlite.js';
import { demoKey, keyFileOf } from './api-key.js';
import { lastErrors } from './errors.js';
import { attachEventLog, consoleLine } from './event-log.js';
import { allowedHostNames, hostGuard, hostName } from './host-guard.js';
import { demoRoutes } from './demo-routes.js';
import { createSmsDashboard } from '../src/dashboard.js';
import { demoConsoleAuth } from './console-auth.js';
import { describeProfiles, parseSmsProfiles, type DemoProfile } from './sms-profiles.js';

const port = Number(process.env.PORT ?? 3000);
// Loopback unless told otherwise: `/` hands the API key to whoever loads it,
// and the key opens the whole send API.
const host = process.env.HOST === undefined || process.env.HOST === '' ? '127.0.0.1' : process.env.HOST;
const dbPath = process.env.SMS_DB ?? './data/sms-outbox.db';
mkdirSync(dirname(dbPath), { recursive: true });
const keyFile = keyFileOf(dbPath);
// Kept with the database: the messages outlive a restart, and so does the key that reads them.
const { key: apiKey, source: keySource } = demoKey(process.env.SMS_API_KEY, keyFile);
const extraHosts = (process.env.SMS_ALLOWED_HOSTS ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '');
const credit = process.env.SMS_CREDIT === undefined || process.env.SMS_CREDIT === '' ? undefined : Number(process.env.SMS_CREDIT);
if (credit !== undefined && !(Number.isSafeInteger(credit) && credit >= 0)) {
  console.error(`sms-outbox demo: SMS_CREDIT must be a whole number of SMS units, got ${process.env.SMS_CREDIT}`);
  process.exit(1);
}
const smartEncoding = process.env.SMS_SMART_ENCODING === '1';
let profiles: DemoProfile[];
try {
  profiles = parseSmsProfiles(process.env.SMS_PROFILES);
} catch (error) {
  console.error(`sms-outbox demo: SMS_PROFILES: ${(error as Error).message}`);
  process.exit(1);
}
const profileCodes = profiles.map((profile) => profile.code);
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
  const routes = process.env.SMPP_ROUTES;
  if (routes !== undefined && routes !== '') {
    const { smppRoutes } = await import('../src/smpp.js');
    // A prefix route whose bind is down sends through the `*` route meanwhile.
    return smppRoutes(routes, { fallbackToDefault: true });
  }
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

/** The demo key's principal. */
const principalId = 'demo';

const storage = new SqliteStorage({ path: dbPath });
// Process metrics beside the gateway's own, all on prom-client's default registry.
promClient.collectDefaultMetrics();
const delivery = await carrier();
/** Where the demo forwards the MO messages of its profiles: its own /demo/inbound, once it listens. */
let inboundUrl: string | undefined;
const sms = createSmsRouter({
  verifyKey: staticKeys([{ key: apiKey, id: principalId, scopes: ['quick', 'premium'], profiles: profileCodes }]),
  storage,
  resolveProfile: staticProfiles(profiles.map((profile) => ({ ...profile, owners: [principalId], ...(smartEncoding ? { smartEncoding } : {}) }))),
  ...(credit === undefined ? {} : { credit: { ledger: 'storage' } }),
  delivery,
  // Subscribers' replies to the demo's profiles go to its own receiver below (the port is
  // known once it listens; none is forwarded before).
  inbound: {
    resolveOwner: (to) => {
      const profile = profiles.find(({ code, senders }) => code === to || senders?.includes(to) === true);
      return profile === undefined ? null : { principal: { id: principalId, inboundUrl }, profile };
    },
  },
  // A demo: delivery reports may go to this machine, and to nowhere else internal.
  dlr: { allowPrivateAddresses: ['127.0.0.0/8', '::1/128'] },
  // A bad SMS_RATE_LIMIT (not an integer >= 0) stops the demo at start with a TypeError.
  // Every answer shows the quota left (`RateLimit`), so the limit can be watched coming.
  rateLimit: { requests: { limit: rateLimit, windowMs: 60_000 }, headers: 'always' },
  metrics: { client: promClient },
});
attachEventLog(sms);
// The operator console, created beside the router so it hears the carrier's first bind.
const operatorConsole = createSmsDashboard(sms, { auth: demoConsoleAuth(apiKey), title: 'sms-outbox demo console' });

const app = express();
// Before everything, the API included: a request that names another site's host is a page
// of that site reaching this machine's loopback (DNS rebinding).
const allowedHosts = allowedHostNames(host, extraHosts);
app.use(hostGuard(allowedHosts));
app.use(sms);
// The package's operator console (sms-outbox/dashboard), behind the demo's key.
app.use('/console', operatorConsole);
app.use(
  demoRoutes({
    apiKey, consolePath: '/console',
    metrics: async () => ({ contentType: promClient.register.contentType, text: await promClient.register.metrics() }),
    ...(delivery instanceof SimulatorDelivery ? { simulateInbound: (message) => delivery.simulateInbound(message) } : {}),
  }),
);
// A delivery-report receiver, so the quick start can show a report arriving.
app.post('/demo/dlr', express.json(), (req, res) => {
  const report = req.body as { data?: { message_ref?: string; status?: string } };
  consoleLine(`dlr.received  ${String(report.data?.message_ref ?? '?')} ${String(report.data?.status ?? '?')}`);
  res.sendStatus(204);
});

// An inbound (MO) webhook receiver, as a customer of a premium short code would run one.
app.post('/demo/inbound', express.json(), (req, res) => {
  const hook = req.body as { data?: { from?: string; to?: string; message?: string } };
  consoleLine(`inbound.received ${String(hook.data?.from ?? '?')} ${String(hook.data?.to ?? '?')} ${String(hook.data?.message ?? '')}`);
  res.sendStatus(204);
});

// Last: a bad body to a receiver above, or a failure of the demo's routes, answered
// `{ details, code }` in one console line, never Express's page with a stack.
app.use(lastErrors(consoleLine));

await sms.ready();
// Topped up to SMS_CREDIT, never taken down: a restart on the same database keeps what is left above it.
if (credit !== undefined) {
  const left = await sms.credit!.balance(principalId);
  if (left < credit) await sms.credit!.topUp(principalId, credit - left);
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');
loopback.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/** `address` as the host part of a URL (IPv6 in brackets). */
function urlHost(address: string): string {
  return address.includes(':') ? `[${address}]` : address;
}

const server = createServer(app);
server.once('error', (error: NodeJS.ErrnoException) => {
  // A HOST that is no address of this machine (EADDRNOTAVAIL), a port in use: say which.
  console.error(`sms-outbox demo: cannot listen on ${host}:${port}: ${error.message}`);
  process.exit(1);
});
server.listen(port, host, () => {
  // The real address and port: PORT=0 lets the system pick one (the tests do), and HOST
  // may be a name.
  const { address, family, port: listening } = server.address() as AddressInfo;
  const everywhere = address === '0.0.0.0' || address === '::';
  // Where to open it from this machine: a wildcard address is not one to browse to.
  const local = address === '0.0.0.0' ? '127.0.0.1' : address === '::' ? '::1' : address;
  const origin = `http://${urlHost(local)}:${listening}`;
  // A HOST given as a name listens on the address it resolved to, which the demo's own
  // reports and webhooks are sent to.
  allowedHosts.add(hostName(urlHost(local)));
  inboundUrl = `${origin}/demo/inbound`;
  console.log(`sms-outbox demo gateway on ${origin} (storage ${dbPath})`);
  console.log(`listening on ${urlHost(address)}:${listening}${everywhere ? ' (every interface)' : ''}`);
  if (!loopback.check(address, family === 'IPv6' ? 'ipv6' : 'ipv4')) {
    console.log(
      `warning: HOST=${host} lets other machines reach this demo: the whole send API, and the page at /, ` +
        'which hands out the API key. Use it only on a network you trust.',
    );
  }
  console.log(`operator console on ${origin}/ (it opens ${origin}/console/), metrics on /metrics`);
  if (keySource === 'environment') {
    console.log('SMS_API_KEY from the environment');
  } else {
    // The assignment alone on its line, so `export <that line>` works in a shell.
    console.log(`SMS_API_KEY=${apiKey}`);
    console.log(
      keySource === 'generated'
        ? `(generated, and kept in ${keyFile}: the same key after a restart; set SMS_API_KEY to choose one)`
        : `(the key kept in ${keyFile} since the first start on this database; set SMS_API_KEY to choose one)`,
    );
  }
  console.log(`profile codes: ${describeProfiles(profiles)}`);
});

async function shutdown(): Promise<void> {
  server.close();
  await sms.close();
  process.exit(0);
}
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());

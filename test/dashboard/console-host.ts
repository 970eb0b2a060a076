/**
 * A host app for the console's tests: the router on memory storage with the credit ledger,
 * two principals (`acme` with spend caps, `globex` expired),
 * the simulated carrier (every message delivered) and one premium short code whose MO
 * messages are taken, with the console mounted at `/admin/sms` behind a staff cookie.
 */
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import express from 'express';
import { createSmsRouter, MemoryStorage, SimulatorDelivery, staticKeys, staticProfiles, type SmsRouter } from '../../src/index.js';
import { createSmsDashboard } from '../../src/dashboard.js';

/** The test key; its principal is `acme`. */
export const KEY = 'console-test-key';
/** The cookie the host's staff check wants. */
export const STAFF_COOKIE = { name: 'staff', value: 'yes' };

/** A running host. */
export interface ConsoleHost {
  sms: SmsRouter;
  delivery: SimulatorDelivery;
  server: Server;
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** Where the console is: `${origin}/admin/sms`. */
  console: string;
  close(): Promise<void>;
}

/** Starts a host on a free port. */
export async function startConsoleHost(): Promise<ConsoleHost> {
  const delivery = new SimulatorDelivery({ seed: 3, latencyMs: [1, 5], outcomes: { delivered: 1 } });
  const profile = { code: '22021501', senders: ['22021501'] };
  const sms = createSmsRouter({
    verifyKey: staticKeys([
      { key: KEY, id: 'acme', scopes: ['quick', 'premium'], profiles: ['12345', '22021501'], dailyUnits: 1_000, monthlyUnits: 20_000 },
      // A principal whose key has expired, with only the read scope and its own request limit.
      { key: 'console-test-old-key', id: 'globex', scopes: ['read'], expiresAt: '2020-01-01T00:00:00Z', rateLimit: 5 },
    ]),
    storage: new MemoryStorage(),
    resolveProfile: staticProfiles([{ code: '12345', owners: ['acme'] }, { ...profile, owners: ['acme'] }]),
    delivery,
    credit: { ledger: 'storage' },
    inbound: { resolveOwner: (to) => (to === '22021501' ? { principal: { id: 'acme' }, profile } : null) },
    worker: { pollIntervalMs: 20 },
  });
  const app = express();
  app.use(sms);
  // The host's own staff check, as a real host would put its session check.
  const isStaff = (req: express.Request): boolean => (req.headers.cookie ?? '').split(';').some((c) => c.trim() === `${STAFF_COOKIE.name}=${STAFF_COOKIE.value}`);
  app.use('/admin/sms', createSmsDashboard(sms, { auth: isStaff, title: 'Acme SMS' }));
  await sms.ready();
  await sms.credit!.topUp('acme', 100);
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    sms, delivery, server, origin, console: `${origin}/admin/sms`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await sms.close();
    },
  };
}

/** Sends `body` to `/api/outbox/create`; returns the refs. */
export async function sendQuick(origin: string, body: unknown): Promise<string[]> {
  const res = await fetch(`${origin}/api/outbox/create`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': KEY },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`send answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { message_ref: string }[]).map((m) => m.message_ref);
}

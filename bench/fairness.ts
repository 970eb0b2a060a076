/**
 * `npx tsx bench/fairness.ts [sqlite|memory|postgres] [--priority]`: one customer's bulk
 * campaign against another customer's one-time passwords, through the public router, on a
 * carrier slower than intake. The test SMSC (test/fixtures/smsc.ts, the `smpp` library's
 * server, in a child) answers every submit with a DELIVRD receipt; the carrier takes 200
 * submits a second: one `SmppDelivery` bind paced at 200 a second, or with `postgres`, two
 * router instances in this process on one fresh PostgreSQL schema, each with its own pool
 * and its own bind paced at 100 a second (A's and B's requests alternate between them).
 *
 * Key A queues 10,000 messages in 100-message requests; then key B sends ten one-message
 * requests, four a second. Printed, as one JSON line on stdout: B's accept-to-submitted
 * delay (median, max), and the rate the queue drained at meanwhile (A's and B's submits),
 * against the carrier's 200 a second.
 *
 * `--priority`: B's profile is `priority: 'transactional'` (staticProfiles), A's bulk. Also
 * printed, for each of B's messages: how many bulk messages (all queued before it) the
 * worker handed to the carrier adapter between its acceptance and its own hand-over
 * (`bulkHandedBefore*`: target 0); how many the SMSC received between its acceptance and
 * its own arrival (`bulkAtCarrierBefore*`), which adds those already handed over, waiting
 * at the paced bind when it was accepted: at most `carrierSlotsPerInstance` (a twentieth of
 * a second of the bind's rate), give or take the SMSC's event lines still in the pipe; and
 * the same counted by the router's `message.submitted` events (`bulkSubmittedEvents*`).
 *
 * PostgreSQL on 127.0.0.1 only (PGHOST, PGPORT, PGUSER, PGDATABASE as the tests use them);
 * the schema is dropped at the end. Bounded: about 30 s; traffic only to 127.0.0.1.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import pg from 'pg';
import { createSmsRouter, MemoryStorage, staticKeys, staticProfiles, type OutgoingPart, type Storage } from '../src/index.js';
import { PostgresStorage } from '../src/postgres.js';
import { SmppDelivery } from '../src/smpp.js';
import { SqliteStorage } from '../src/sqlite.js';
import { WORKER_DEFAULTS } from '../src/worker/options.js';
import { carrierSlots } from '../src/worker/submit-worker.js';
import { startSmsc } from '../test/fixtures/smsc.js';

/** Submits a second the carrier takes, over all binds. */
const TPS = 200;
const BULK_REQUESTS = 100;
const BULK_PER_REQUEST = 100;
const OTP_REQUESTS = 10;
const OTP_INTERVAL_MS = 250;

const args = process.argv.slice(2);
const priorityMode = args.includes('--priority');
const kind = args.find((a) => !a.startsWith('--')) ?? 'sqlite';
if (!['sqlite', 'memory', 'postgres'].includes(kind)) throw new Error(`unknown storage ${kind}: sqlite, memory or postgres`);
const instances = kind === 'postgres' ? 2 : 1;
const tpsPerBind = TPS / instances;

const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-fairness-'));
const pgSchema = `bench_fairness_${randomBytes(4).toString('hex')}`;
const pools: pg.Pool[] = [];
const newPool = (): pg.Pool => {
  const pool = new pg.Pool({
    host: process.env.PGHOST ?? '127.0.0.1',
    port: Number(process.env.PGPORT ?? 5432),
    user: process.env.PGUSER ?? 'postgres',
    database: process.env.PGDATABASE ?? 'test',
    max: 10,
  });
  pools.push(pool);
  return pool;
};
const newStorage = (): Storage =>
  kind === 'memory'
    ? new MemoryStorage()
    : kind === 'postgres'
      ? new PostgresStorage({ pool: newPool(), schema: pgSchema })
      : new SqliteStorage({ path: join(dir, 'outbox.sqlite') });

// With --priority the SMSC reports every submit, so that the order the carrier received
// them in is read where it happened (at 200 a second its lines cost it nothing).
const smsc = await startSmsc({ password: 'secret', quiet: !priorityMode });
const servers: import('node:http').Server[] = [];
const routers: ReturnType<typeof createSmsRouter>[] = [];
try {
  await smsc.send({ cmd: 'set', receiptMode: 'auto' });

  const acceptedAt = new Map<string, number>();
  const otpDelays: number[] = [];
  /** When each message (A's or B's) was submitted. */
  let submittedAt: number[] = [];
  /** Bulk submissions so far, and that count when each of B's messages was accepted. */
  let bulkSubmits = 0;
  const bulkAtAccept = new Map<string, number>();
  /** Bulk messages submitted between each of B's messages' acceptance and its submission (the router's events). */
  const overtaken: number[] = [];
  /** The SMSC's events seen when each of B's messages was accepted, by its text. */
  const smscAtAccept = new Map<string, number>();
  /** Bulk parts handed to a carrier adapter so far, and that count when each of B's messages was accepted. */
  let bulkHanded = 0;
  const handedAtAccept = new Map<string, number>();
  /** Bulk parts handed to the carrier between each of B's messages' acceptance and its own hand-over. */
  const handedBefore: number[] = [];

  const bases: string[] = [];
  for (let i = 0; i < instances; i++) {
    const smpp = new SmppDelivery({ url: `smpp://bench:secret@127.0.0.1:${smsc.port}`, tps: tpsPerBind });
    // The adapter as the router sees it, counting the parts the worker hands it.
    const delivery = new Proxy(smpp, {
      get(target, key) {
        if (key === 'submit') {
          return (part: OutgoingPart) => {
            if (part.principalId === 'B') handedBefore.push(bulkHanded - (handedAtAccept.get(part.ref) ?? bulkHanded));
            else bulkHanded++;
            return target.submit(part);
          };
        }
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const sms = createSmsRouter({
      verifyKey: staticKeys([
        { key: 'bulk-key', id: 'A', profiles: ['12345'] },
        { key: 'otp-key', id: 'B', profiles: ['67890'] },
      ]),
      resolveProfile: staticProfiles([
        { code: '12345', owners: ['A'], priority: 'bulk' },
        { code: '67890', owners: ['B'], priority: priorityMode ? 'transactional' : 'bulk' },
      ]),
      storage: newStorage(),
      delivery,
      rateLimit: false,
    });
    routers.push(sms);
    sms.on('message.accepted', ({ message }) => {
      acceptedAt.set(message.ref, message.createdAt);
      if (message.principalId === 'B') {
        bulkAtAccept.set(message.ref, bulkSubmits);
        handedAtAccept.set(message.ref, bulkHanded);
        smscAtAccept.set(message.text, smsc.events.length);
      }
    });
    sms.on('message.submitted', ({ message }) => {
      const now = Date.now();
      if (message.principalId === 'B') {
        otpDelays.push(now - (acceptedAt.get(message.ref) ?? message.createdAt));
        overtaken.push(bulkSubmits - (bulkAtAccept.get(message.ref) ?? bulkSubmits));
      } else bulkSubmits++;
      submittedAt.push(now);
    });
    const server = express().use(sms).listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise((resolve) => server.once('listening', resolve));
    bases.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/outbox/create`);
    await sms.ready();
    await smpp.waitForBind(5_000);
  }

  let sent = 0;
  /** One request, to the instances in turn. */
  const send = async (key: string, profile: string, count: number, text = (i: number) => `m${i}`): Promise<void> => {
    const base = bases[sent++ % bases.length]!;
    const body = { profile_code: profile, messages: Array.from({ length: count }, (_, i) => ({ recipient: '254712345678', message: text(i) })) };
    const res = await fetch(base, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`send answered ${res.status}: ${await res.text()}`);
  };

  const bulkStarted = Date.now();
  const queue = Array.from({ length: BULK_REQUESTS }, () => () => send('bulk-key', '12345', BULK_PER_REQUEST));
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let next = queue.shift(); next; next = queue.shift()) await next();
  }));
  const bulkAccepted = Date.now() - bulkStarted;
  submittedAt = submittedAt.filter((at) => at >= bulkStarted);

  const otpStarted = Date.now();
  for (let i = 0; i < OTP_REQUESTS; i++) {
    await send('otp-key', '67890', 1, () => `otp ${i}`);
    await new Promise((resolve) => setTimeout(resolve, OTP_INTERVAL_MS));
  }
  const deadline = Date.now() + 60_000;
  while (otpDelays.length < OTP_REQUESTS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  const windowEnd = Date.now();
  const drained = submittedAt.filter((at) => at >= otpStarted && at <= windowEnd).length;
  const drainRate = drained / ((windowEnd - otpStarted) / 1000);

  // At the carrier: for each of B's messages, the bulk submits the SMSC received after it
  // was accepted and before it.
  const atCarrier: number[] = [];
  const events = smsc.events;
  for (const [text, from] of smscAtAccept) {
    const at = events.findIndex((e, i) => i >= from && e.event === 'submit' && e.text === text);
    if (at < 0) continue;
    atCarrier.push(events.slice(from, at).filter((e) => e.event === 'submit' && e.text.startsWith('m')).length);
  }

  const sorted = [...otpDelays].sort((a, b) => a - b);
  const median = sorted.length === 0 ? NaN : sorted[Math.floor((sorted.length - 1) / 2)]!;
  console.log(
    JSON.stringify({
      storage: kind,
      instances,
      tpsPerBind,
      priority: priorityMode ? 'transactional' : 'bulk',
      bulkAcceptedMs: bulkAccepted,
      otpSubmitted: otpDelays.length,
      otpDelayMedianMs: median,
      otpDelayMaxMs: sorted.at(-1) ?? NaN,
      bulkDrainPerSecond: Math.round(drainRate),
      drainRatio: Number((drainRate / TPS).toFixed(3)),
      ...(priorityMode
        ? {
            bulkHandedBeforeEach: handedBefore,
            bulkHandedBeforeMax: handedBefore.length === 0 ? NaN : Math.max(...handedBefore),
            bulkAtCarrierBeforeEach: atCarrier,
            bulkAtCarrierBeforeMax: atCarrier.length === 0 ? NaN : Math.max(...atCarrier),
            bulkSubmittedEventsBeforeEach: overtaken,
            bulkSubmittedEventsBeforeMax: overtaken.length === 0 ? NaN : Math.max(...overtaken),
            carrierSlotsPerInstance: carrierSlots(WORKER_DEFAULTS.concurrency, tpsPerBind),
          }
        : {}),
    }),
  );
} finally {
  for (const server of servers) server.close();
  for (const sms of routers) await sms.close();
  await smsc.stop();
  if (kind === 'postgres') {
    await pools[0]?.query(`DROP SCHEMA IF EXISTS "${pgSchema}" CASCADE`).catch(() => undefined);
  }
  for (const pool of pools) await pool.end();
  rmSync(dir, { recursive: true, force: true });
}

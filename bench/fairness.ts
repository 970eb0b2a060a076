/**
 * `npx tsx bench/fairness.ts [sqlite|memory]`: one customer's bulk campaign against another
 * customer's one-time passwords, through the public router, on one carrier bind slower than
 * intake. The test SMSC (test/fixtures/smsc.ts, the `smpp` library's server, in a child)
 * answers every submit with a DELIVRD receipt; `SmppDelivery` paces submits at 200 a second.
 *
 * Key A queues 10,000 messages in 100-message requests; then key B sends ten one-message
 * requests, four a second. Printed: B's accept-to-submitted delay (median, max), and the
 * rate the queue drained at meanwhile (A's and B's submits), against the bind's 200 a second. Bounded: about
 * 30 s; traffic only to 127.0.0.1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { createSmsRouter, MemoryStorage, staticKeys, type Storage } from '../src/index.js';
import { SmppDelivery } from '../src/smpp.js';
import { SqliteStorage } from '../src/sqlite.js';
import { startSmsc } from '../test/fixtures/smsc.js';

const TPS = 200;
const BULK_REQUESTS = 100;
const BULK_PER_REQUEST = 100;
const OTP_REQUESTS = 10;
const OTP_INTERVAL_MS = 250;

const kind = process.argv[2] ?? 'sqlite';
const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-fairness-'));
const storage: Storage = kind === 'memory' ? new MemoryStorage() : new SqliteStorage({ path: join(dir, 'outbox.sqlite') });

const smsc = await startSmsc({ password: 'secret', quiet: true });
await smsc.send({ cmd: 'set', receiptMode: 'auto' });
const delivery = new SmppDelivery({ url: `smpp://bench:secret@127.0.0.1:${smsc.port}`, tps: TPS });
const sms = createSmsRouter({
  verifyKey: staticKeys([
    { key: 'bulk-key', id: 'A', profiles: ['12345'] },
    { key: 'otp-key', id: 'B', profiles: ['12345'] },
  ]),
  storage,
  delivery,
  rateLimit: false,
});
const acceptedAt = new Map<string, number>();
const otpDelays: number[] = [];
/** When each message (A's or B's) was submitted. */
let bulkSubmitted: number[] = [];
sms.on('message.accepted', ({ message }) => acceptedAt.set(message.ref, message.createdAt));
sms.on('message.submitted', ({ message }) => {
  const now = Date.now();
  if (message.principalId === 'B') otpDelays.push(now - (acceptedAt.get(message.ref) ?? message.createdAt));
  bulkSubmitted.push(now);
});
const server = express().use(sms).listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/outbox/create`;
await sms.ready();
await delivery.waitForBind(5_000);

const send = async (key: string, count: number): Promise<void> => {
  const body = { profile_code: '12345', messages: Array.from({ length: count }, (_, i) => ({ recipient: '254712345678', message: `m${i}` })) };
  const res = await fetch(base, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
  if (res.status !== 200) throw new Error(`send answered ${res.status}: ${await res.text()}`);
};

const bulkStarted = Date.now();
const queue = Array.from({ length: BULK_REQUESTS }, () => () => send('bulk-key', BULK_PER_REQUEST));
await Promise.all(Array.from({ length: 8 }, async () => {
  for (let next = queue.shift(); next; next = queue.shift()) await next();
}));
const bulkAccepted = Date.now() - bulkStarted;
bulkSubmitted = bulkSubmitted.filter((at) => at >= bulkStarted);

const otpStarted = Date.now();
for (let i = 0; i < OTP_REQUESTS; i++) {
  await send('otp-key', 1);
  await new Promise((resolve) => setTimeout(resolve, OTP_INTERVAL_MS));
}
const deadline = Date.now() + 60_000;
while (otpDelays.length < OTP_REQUESTS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
const windowEnd = Date.now();
const drained = bulkSubmitted.filter((at) => at >= otpStarted && at <= windowEnd).length;
const drainRate = drained / ((windowEnd - otpStarted) / 1000);

const sorted = [...otpDelays].sort((a, b) => a - b);
const median = sorted.length === 0 ? NaN : sorted[Math.floor((sorted.length - 1) / 2)]!;
console.log(
  JSON.stringify({
    storage: kind,
    bulkAcceptedMs: bulkAccepted,
    otpSubmitted: otpDelays.length,
    otpDelayMedianMs: median,
    otpDelayMaxMs: sorted.at(-1) ?? NaN,
    bulkDrainPerSecond: Math.round(drainRate),
    drainRatio: Number((drainRate / TPS).toFixed(3)),
  }),
);

server.close();
await sms.close();
await smsc.stop();
rmSync(dir, { recursive: true, force: true });

/**
 * The console's carrier view over a real SMSC (the test SMSC of test/delivery): each bind's
 * state, its TPS in use against the adapter's budget and its in-flight submits against its
 * window, read from the SMPP adapter; a drop shows as reconnecting; and the overview's
 * delivery rate by bind.
 */
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createSmsRouter, MemoryStorage, staticKeys, type SmsRouter } from '../../src/index.js';
import { createSmsDashboard } from '../../src/dashboard.js';
import { SmppDelivery } from '../../src/smpp.js';
import { eventually } from '../helpers/poll.js';
import { smsc, useSmsc } from '../delivery/smpp-smsc.js';

useSmsc();

let running: { sms: SmsRouter; server: Server } | null = null;

afterEach(async () => {
  if (running === null) return;
  running.server.closeAllConnections();
  await new Promise((resolve) => running!.server.close(resolve));
  await running.sms.close();
  running = null;
});

/** A host with the router on the test SMSC (two binds, window 4, 40 a second) and the console at `/ops`. */
async function startHost(): Promise<{ sms: SmsRouter; origin: string }> {
  const delivery = new SmppDelivery({ url: `smpp://tester:secret@127.0.0.1:${smsc.port}`, binds: 2, window: 4, tps: 40, reconnectMinMs: 20, reconnectMaxMs: 200 });
  const sms = createSmsRouter({
    verifyKey: staticKeys([{ key: 'k', id: 'acme', profiles: ['12345'] }]),
    storage: new MemoryStorage(),
    delivery,
    worker: { pollIntervalMs: 20 },
  });
  // The drop is the first test's point: its error events are expected, not printed.
  sms.on('error', () => undefined);
  const app = express();
  app.use(sms);
  app.use('/ops', createSmsDashboard(sms, { allowUnauthenticated: true }));
  await sms.ready();
  await delivery.waitForBind();
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  running = { sms, server };
  return { sms, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** The text of the carrier view's binds table rows, tags dropped. */
async function bindRows(origin: string): Promise<string[]> {
  const html = await (await fetch(`${origin}/ops/carrier`)).text();
  const table = /<table id="binds">([\s\S]*?)<\/table>/.exec(html)?.[1] ?? '';
  return [...table.matchAll(/<tr>(.*?)<\/tr>/g)].slice(1).map((row) => row[1]!.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim());
}

describe('the console over a real SMSC', () => {
  it('shows each bind bound with its TPS against the budget and its window, and a drop as reconnecting', async () => {
    const { origin } = await startHost();
    const rows = await bindRows(origin);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/^transceiver\.1 bound .* 0 \/ 40 0 \/ 4 - - -$/);
    expect(rows[1]).toMatch(/^transceiver\.2 bound .* 0 \/ 40 0 \/ 4 - - -$/);

    await smsc.send({ cmd: 'drop' });
    await eventually(async () => (await bindRows(origin)).some((row) => row.includes('down (reconnecting)')), { what: 'a bind shown reconnecting' });
    await eventually(async () => (await bindRows(origin)).every((row) => row.includes(' bound ')), { what: 'both bound again' });
  });

  it('counts a delivered message under the bind that took it, and shows its sends in TPS in use', async () => {
    const { sms, origin } = await startHost();
    await smsc.send({ cmd: 'set', receiptMode: 'auto' });
    const res = await fetch(`${origin}/api/outbox/create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': 'k' },
      body: JSON.stringify({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    const ref = ((await res.json()) as { message_ref: string }[])[0]!.message_ref;
    await eventually(async () => (await sms.storage.getMessage('acme', ref))?.state === 'delivered', { what: 'the delivery' });
    const overview = await (await fetch(`${origin}/ops/`)).text();
    expect(/<table id="rate-route">[\s\S]*?<\/table>/.exec(overview)?.[0]).toMatch(/transceiver\.[12]<\/td><td>1<\/td><td>1<\/td><td>100%/);
    expect((await bindRows(origin)).join('\n')).toMatch(/0\.1 \/ 40/);
  });
});

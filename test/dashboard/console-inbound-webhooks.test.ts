/**
 * The console's Callbacks view lists a principal's failed inbound (MO) webhooks beside its
 * failed reports, and its Replay button (a POST with the CSRF token, from the same origin)
 * sends one again through the inbound dispatcher; a delivered webhook leaves the list. Real
 * HTTP throughout: the console on a listening server, the webhook receiver a real one.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createSmsRouter, MemoryStorage, SimulatorDelivery, staticKeys, type SmsRouter } from '../../src/index.js';
import { createSmsDashboard } from '../../src/dashboard.js';
import { startReceiver, type Receiver } from '../dlr/helpers.js';
import { eventually } from '../helpers/poll.js';

const SHORT_CODE = '22021501';
const open: { sms: SmsRouter; receiver: Receiver; close: () => void }[] = [];
afterEach(async () => {
  for (const { sms, receiver, close } of open.splice(0)) {
    close();
    await sms.close();
    await receiver.close();
  }
});

describe('the console\u2019s failed inbound webhooks', () => {
  it('lists a failed MO webhook with its attempt, and its Replay button delivers it once more', async () => {
    const up = { now: false };
    const receiver = await startReceiver(() => ({ status: up.now ? 204 : 503 }));
    const delivery = new SimulatorDelivery({ seed: 3, latencyMs: [1, 5] });
    const sms = createSmsRouter({
      verifyKey: staticKeys([{ key: 'console-inbound-key', id: 'acme', profiles: [SHORT_CODE], inboundUrl: `${receiver.origin}/inbound` }]),
      storage: new MemoryStorage(),
      delivery,
      worker: { pollIntervalMs: 20 },
      dlr: { allowPrivateAddresses: true, schedule: [0], pollIntervalMs: 20 },
    });
    const app = express().use(sms).use('/ops', createSmsDashboard(sms, { allowUnauthenticated: true }));
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    open.push({ sms, receiver, close: () => server.close() });
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const failed: string[] = [];
    const sent: string[] = [];
    sms.on('inbound.failed', (event) => void failed.push(event.inbound.ref));
    sms.on('inbound.sent', (event) => void sent.push(event.inbound.ref));
    await sms.ready();

    await delivery.simulateInbound({ from: '+254711000001', to: SHORT_CODE, text: 'STATUS' });
    await eventually(() => failed.length === 1, { what: 'the MO webhook failed' });

    const view = await fetch(`${origin}/ops/callbacks?principal=acme`);
    const html = await view.text();
    expect(view.status).toBe(200);
    const section = html.slice(html.indexOf('id="inbound-webhooks"'));
    expect(section).toContain(`<td class="mono">${failed[0]}</td><td class="mono">254711000001</td><td class="mono">${SHORT_CODE}</td>`);
    expect(section).toMatch(/<td>1<\/td><td>503<\/td><td>HTTP 503<\/td>/);

    up.now = true;
    const cookie = view.headers.getSetCookie()[0]!.split(';')[0]!;
    const token = /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
    const replay = await fetch(`${origin}/ops/actions/replay-inbound`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie, Origin: origin },
      body: `_csrf=${token}&principal=acme&ref=${failed[0]}`,
    });
    expect(replay.status).toBe(303);
    await eventually(() => sent.length === 1, { what: 'the replayed webhook delivered' });
    expect(sent).toEqual(failed);
    expect(receiver.requests).toHaveLength(2);
    const after = await (await fetch(`${origin}/ops/callbacks?principal=acme`)).text();
    expect(after).toContain('No failed inbound webhook');
  });
});

/**
 * The console's Callbacks view in headless Chromium: a receiver outage leaves a principal's
 * delivery reports failed; the view lists them with their attempts and last error; Replay
 * (a POST form with the CSRF token) sends one again, and the button for all of them the
 * rest, each delivered once more; a forged replay is refused.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import express from 'express';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSmsDashboard } from '../../src/dashboard.js';
import { createSmsRouter, MemoryStorage, SimulatorDelivery, staticKeys, staticProfiles, type SmsRouter } from '../../src/index.js';
import { ARTIFACTS, chromiumMissing, consoleErrorsOf, launchChromium } from '../demo/dashboard-page.js';
import { startReceiver, type Receiver } from '../dlr/helpers.js';
import { eventually } from '../helpers/poll.js';

const KEY = 'callbacks-console-key';

describe.skipIf(chromiumMissing !== null)('the console\u2019s Callbacks view in Chromium', () => {
  let sms: SmsRouter;
  let server: Server;
  let receiver: Receiver;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let origin: string;
  let fixed = false;
  const failed: string[] = [];
  const sent: string[] = [];

  beforeAll(async () => {
    receiver = await startReceiver(() => ({ status: fixed ? 200 : 500 }));
    sms = createSmsRouter({
      verifyKey: staticKeys([{ key: KEY, id: 'acme', profiles: ['12345'] }]),
      resolveProfile: staticProfiles([{ code: '12345', owners: ['acme'] }]),
      storage: new MemoryStorage(),
      delivery: new SimulatorDelivery({ seed: 3, latencyMs: [1, 5], outcomes: { delivered: 1 } }),
      dlr: { schedule: [0], allowPrivateAddresses: ['127.0.0.0/8'], pollIntervalMs: 10 },
      worker: { pollIntervalMs: 20 },
    });
    sms.on('dlr.failed', (event) => void failed.push(event.message.ref));
    sms.on('dlr.sent', (event) => void sent.push(event.message.ref));
    const app = express();
    app.use(sms);
    app.use('/admin/sms', createSmsDashboard(sms, { allowUnauthenticated: true }));
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    errors = consoleErrorsOf(page);
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await sms?.close();
    await receiver?.close();
    expect(errors).toEqual([]);
  }, 30_000);

  it('lists failed reports with their attempts and replays one, then all, each delivered once more', async () => {
    const answer = await fetch(`${origin}/api/outbox/create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': KEY },
      body: JSON.stringify({ profile_code: '12345', dlr_callback_url: `${receiver.origin}/dlr`, messages: [1, 2, 3].map((i) => ({ recipient: '254712345678', message: `hi ${i}` })) }),
    });
    const refs = ((await answer.json()) as { message_ref: string }[]).map((m) => m.message_ref);
    await eventually(() => failed.length === 3, { what: 'three failed reports', timeoutMs: 15_000 });

    await page.goto(`${origin}/admin/sms/callbacks`);
    await page.locator('#callbacks-principal').fill('acme');
    await page.getByRole('button', { name: 'List' }).click();
    await page.waitForURL(/principal=acme/);
    const rows = page.locator('#callback-list tbody tr');
    expect(await rows.count()).toBe(3);
    expect(await rows.first().innerText()).toContain('HTTP 500');
    await page.screenshot({ path: join(ARTIFACTS, 'console-callbacks-1280.png'), fullPage: true });

    fixed = true;
    const first = (await rows.first().locator('td').first().innerText()).trim();
    await rows.first().getByRole('button', { name: 'Replay' }).click();
    await page.waitForURL(/done=replayed/);
    await eventually(() => sent.length === 1, { what: 'the replayed report' });
    expect(sent).toEqual([first]);
    await page.reload();
    expect(await page.locator('#callback-list tbody tr').count()).toBe(2);

    await page.getByRole('button', { name: 'Replay every failed report of acme' }).click();
    await page.waitForURL(/done=replayed/);
    await eventually(() => sent.length === 3, { what: 'every replayed report' });
    expect([...sent].sort()).toEqual([...refs].sort());
    await page.reload();
    expect(await page.locator('#callback-list-empty').innerText()).toBe('No failed delivery report');
    // One 500 and one 200 per report.
    for (const ref of refs) expect(receiver.requests.filter((r) => r.body.includes(ref))).toHaveLength(2);
  });

  it('refuses a replay with a forged CSRF token', async () => {
    await page.goto(`${origin}/admin/sms/callbacks?principal=acme`);
    const logged = errors.length;
    const forged = await page.evaluate(async (url) => {
      const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: '_csrf=forged&principal=acme' });
      return { status: res.status, body: await res.json() };
    }, `${origin}/admin/sms/actions/replay`);
    expect(forged).toEqual({ status: 403, body: { code: 'CSRF_TOKEN_INVALID', details: expect.any(String) } });
    expect(errors.splice(logged)).toEqual([expect.stringContaining('403')]);
  });
});

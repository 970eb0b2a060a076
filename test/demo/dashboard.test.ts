/**
 * The demo's dashboard, end to end: the demo host as a child process (SQLite in a temp
 * dir, simulated carrier), its page in headless Chromium, a message sent from the page's
 * form, and its row seen reaching `delivered` with its delivery report attempt. A second
 * demo whose simulator expires every message shows the reason cell of `expired/expired`.
 * The page shows the queue: a count when it connects, then each 5-second sample.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo, stopDemo } from '../helpers/demo.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const API_KEY = 'dashboard-test-key';

const missing = existsSync(CHROMIUM) ? null : `Chromium not found at ${CHROMIUM} (apt-get install chromium)`;
if (missing !== null && process.env.SMS_OUTBOX_REQUIRE_SERVICES === '1') {
  throw new Error(`${missing}, and SMS_OUTBOX_REQUIRE_SERVICES=1 requires it`);
}
if (missing !== null) console.warn(`skipping the dashboard test: ${missing}`);

describe.skipIf(missing !== null)('demo dashboard', () => {
  let dir: string;
  let demo: ReturnType<typeof startDemo>;
  let origin: string;
  /** A demo whose every message ends `expired` with the reason `expired`. */
  let expiring: ReturnType<typeof startDemo>;
  let expiringOrigin: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sms-outbox-dashboard-'));
    demo = startDemo({ SMS_DB: join(dir, 'demo.db'), SMS_API_KEY: API_KEY });
    expiring = startDemo({ SMS_DB: join(dir, 'expiring.db'), SMS_API_KEY: API_KEY, SMS_SIM_OUTCOMES: 'expired:1' });
    [origin, expiringOrigin, browser] = await Promise.all([
      demo.origin,
      expiring.origin,
      chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          '--no-first-run',
        ],
      }),
    ]);
    page = await browser.newPage();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (demo) await stopDemo(demo.child);
    if (expiring) await stopDemo(expiring.child);
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 30_000);

  it('sends a message from the form and shows it reach delivered, with its delivery report', async () => {
    await page.goto(`${origin}/`);
    // The live stream is open (its snapshot arrived), so no change can be missed.
    await page.locator('#live.on').waitFor({ timeout: 10_000 });

    await page.fill('#recipient', '254712345678');
    await page.fill('#message', 'Dashboard test \u00e9t\u00e9');
    await page.click('#submit');
    const result = page.locator('#result[data-ref]');
    await result.waitFor({ timeout: 10_000 });
    expect(await result.textContent()).toMatch(/^200: accepted /);
    const ref = (await result.getAttribute('data-ref'))!;

    const row = page.locator(`tr[data-ref="${ref}"]`);
    await page.locator(`tr[data-ref="${ref}"][data-state="delivered"]`).waitFor({ timeout: 20_000 });
    expect(await row.locator('.state-cell').textContent()).toBe('delivered');
    expect(await row.locator('.reason-cell').textContent()).toBe('delivered_to_terminal');
    expect(await row.locator('.reason-cell .reason').getAttribute('title')).toBe('Message delivered to terminal');
    // No external_id was sent: the cell says so instead of echoing the ref.
    expect(await row.locator('.external-id').textContent()).toBe('none sent');
    expect(await row.locator('.text').textContent()).toBe('Dashboard test \u00e9t\u00e9');
    // The form asked for a report to the demo's own receiver, which answers 204.
    const sent = row.locator('.attempt[data-result="sent"]');
    await sent.waitFor({ timeout: 20_000 });
    expect(await sent.textContent()).toMatch(/^#1 sent 204 \(\d+ ms\)$/);

    // A reload gets the row back from the snapshot, its state read from storage.
    await page.reload();
    await page.locator(`tr[data-ref="${ref}"][data-state="delivered"]`).waitFor({ timeout: 10_000 });
  }, 60_000);

  it('shows a refused request\u2019s reason instead of a row', async () => {
    await page.goto(`${origin}/`);
    await page.locator('#live.on').waitFor({ timeout: 10_000 });
    const rows = await page.locator('#messages tr').count();
    await page.fill('#recipient', '+254712345678');
    await page.click('#submit');
    await page.locator('#result.error').waitFor({ timeout: 10_000 });
    expect(await page.locator('#result').textContent()).toMatch(/^422: messages\[0\]\.recipient: /);
    expect(await page.locator('#messages tr').count()).toBe(rows);
  }, 30_000);

  // Before the tests below, which send more messages: its counts are of the two tests above.
  it('serves the gateway\u2019s Prometheus metrics at /metrics', async () => {
    const res = await fetch(`${origin}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toContain('sms_outbox_messages_accepted_total{endpoint="quick",profile="12345"} 1\n');
    expect(text).toMatch(/sms_outbox_messages_finished_total\{endpoint="quick",state="delivered",reason="delivered_to_terminal"\} 1\n/);
    expect(text).toContain('sms_outbox_requests_rejected_total{endpoint="quick",status="422"} 1\n');
    expect(text).toContain('sms_outbox_dlr_attempts_total{result="sent"} 1\n');
    // prom-client's process metrics sit beside them.
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('shows each ref by its distinctive part, the full ref copyable, and the external id', async () => {
    await page.goto(`${origin}/`);
    await page.locator('#live.on').waitFor({ timeout: 10_000 });
    // Two messages in one request: accepted in the same millisecond, so their refs share
    // their first 48 bits (the timestamp of UUIDv7).
    const res = await fetch(`${origin}/api/outbox/create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': API_KEY },
      body: JSON.stringify({
        profile_code: '12345',
        messages: [
          { recipient: '254712345678', message: 'First', external_id: 'order-17' },
          { recipient: '254712345679', message: 'Second', external_id: 'order-18' },
        ],
      }),
    });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { external_id: string; message_ref: string }[];
    const [first, second] = answer.map((m) => m.message_ref) as [string, string];
    expect(first.slice(0, 8)).toBe(second.slice(0, 8));

    const texts: string[] = [];
    for (const [ref, externalId] of [[first, 'order-17'], [second, 'order-18']] as const) {
      const row = page.locator(`tr[data-ref="${ref}"]`);
      await row.waitFor({ timeout: 10_000 });
      const cell = row.locator('td.ref');
      const text = (await cell.textContent())!;
      expect(text).toBe(`\u2026${ref.slice(-12)}`);
      expect(await cell.getAttribute('title')).toBe(`${ref} (click to copy)`);
      expect(await row.locator('.external-id').textContent()).toBe(externalId);
      texts.push(text);
    }
    expect(texts[0]).not.toBe(texts[1]);

    // A click puts the whole ref on the clipboard.
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    await page.locator(`tr[data-ref="${second}"] td.ref`).click();
    await page.locator(`tr[data-ref="${second}"] td.ref.copied`).waitFor({ timeout: 5_000 });
    // A string, as the tests are compiled without the DOM's types.
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(second);
  }, 30_000);

  it('shows the queue by class and the oldest message\u2019s wait, then each new sample', async () => {
    await page.goto(`${origin}/`);
    // The count taken when the page connected: no 5 s wait for the first sample.
    const shown = page.locator('#queue[data-at]');
    await shown.waitFor({ timeout: 10_000 });
    expect(await page.locator('#queue-transactional').textContent()).toMatch(/^\d+$/);
    expect(await page.locator('#queue-bulk').textContent()).toMatch(/^\d+$/);
    expect(await page.locator('#queue-oldest').textContent()).toMatch(/^(none|\d+ s|\d+ min \d+ s|\d+ h \d+ min)$/);
    expect(await shown.getAttribute('data-transactional')).toMatch(/^\d+$/);
    expect(await shown.getAttribute('data-bulk')).toMatch(/^\d+$/);
    const first = Number(await shown.getAttribute('data-at'));
    expect(first).toBeGreaterThan(0);

    // The router's queue.depth sample comes within 5 s and replaces it.
    await page.waitForFunction(`Number(document.getElementById('queue').dataset.at) > ${first}`, undefined, { timeout: 12_000 });
    expect(await page.locator('#queue-bulk').textContent()).toMatch(/^\d+$/);
  }, 30_000);

  it('does not repeat the state as its reason: expired/expired shows the description', async () => {
    const res = await fetch(`${expiringOrigin}/api/outbox/create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': API_KEY },
      body: JSON.stringify({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Too late' }] }),
    });
    expect(res.status).toBe(200);
    const [{ message_ref: ref }] = (await res.json()) as [{ message_ref: string }];
    const expiringPage = await browser.newPage();
    try {
      await expiringPage.goto(`${expiringOrigin}/`);
      const row = expiringPage.locator(`tr[data-ref="${ref}"][data-state="expired"]`);
      await row.waitFor({ timeout: 20_000 });
      // What the API says, so the test knows the page had something to repeat.
      const status = (await (await fetch(`${expiringOrigin}/api/outbox/delivery-status/${ref}`, { headers: { 'X-API-Key': API_KEY } })).json()) as Record<string, unknown>;
      expect(status).toMatchObject({ status: 'expired', status_reason: 'expired' });
      expect(await row.locator('.state-cell').textContent()).toBe('expired');
      const reason = await row.locator('.reason-cell').textContent();
      expect(reason).not.toBe('expired');
      expect(reason).toBe(status.status_description);
    } finally {
      await expiringPage.close();
    }
  }, 30_000);
});

/**
 * The dashboard's rows and layout, in headless Chromium against the demo host as a child
 * process: each ref shown by its distinctive part and copyable, the external id, a waiting
 * delivery report's next attempt (live and from storage), and the page fitting wide and
 * narrow windows. Screenshots are kept in test-artifacts/.
 */
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, ARTIFACTS, chromiumMissing, send, dashboardBed } from './dashboard-page.js';

describe.skipIf(chromiumMissing !== null)('demo dashboard', () => {
  const bed = dashboardBed({ noPageErrors: true });
  let origin: string;
  let browser: Browser;
  let page: Page;
  beforeAll(() => void ({ origin, browser, page } = bed));

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

  it('shows when a waiting delivery report is tried next, live and from storage', async () => {
    // A receiver that is down, and asks for an hour: the next attempt stays put while the test looks.
    let hits = 0;
    const receiver: Server = createServer((_req, res) => {
      hits += 1;
      res.writeHead(503, { 'Retry-After': '3600' }).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = receiver.address() as AddressInfo;
      await page.goto(`${origin}/`);
      await page.locator('#live.on').waitFor({ timeout: 10_000 });
      const sentAt = Date.now();
      const [ref] = await send(origin, '/create', {
        profile_code: '12345',
        messages: [{ recipient: '254712345620', message: 'Report me', external_id: 'waiting-report' }],
        dlr_callback_url: `http://127.0.0.1:${port}/dlr`,
      });
      const row = page.locator(`#messages tr[data-ref="${ref}"]`);
      const next = row.locator('.next-attempt');
      await next.waitFor({ timeout: 20_000 });
      expect(hits).toBe(1);
      expect(await row.locator('.attempt[data-result="retrying"]').textContent()).toMatch(/^#1 retrying 503 \(\d+ ms\)$/);

      // The same time as the status endpoint's, about an hour away (the receiver's Retry-After).
      const status = (await (await fetch(`${origin}/api/outbox/delivery-status/${ref}`, { headers: { 'X-API-Key': API_KEY } })).json()) as {
        callback: { state: string; attempts: number; next_attempt_at: string };
      };
      expect(status.callback).toMatchObject({ state: 'pending', attempts: 1 });
      const due = new Date(status.callback.next_attempt_at).getTime();
      expect(Number(await next.getAttribute('data-at'))).toBe(due);
      expect(due).toBeGreaterThan(sentAt + 59 * 60_000);
      expect(await next.getAttribute('title')).toBe(new Date(due).toISOString());
      // The page writes the time alone for today and the date with it otherwise (an hour away
      // crosses midnight late in the day), in the browser's locale.
      const shown = (await page.evaluate(
        `(() => { const d = new Date(${due}); return d.toDateString() === new Date().toDateString() ? d.toLocaleTimeString() : d.toLocaleString(); })()`,
      )) as string;
      expect(await next.textContent()).toBe(`next attempt (#2) at ${shown}`);

      // A search reads the report from storage, and shows the same time.
      await page.fill('#search-q', ref!);
      await page.click('#search-submit');
      await page.locator('#search-status[data-count="1"]').waitFor({ timeout: 10_000 });
      expect(await page.locator(`#found tr[data-ref="${ref}"] .next-attempt`).getAttribute('data-at')).toBe(String(due));

      // The counts have caught up with the delivered message, for a screenshot that agrees with itself.
      await page.locator('#count-submitted[data-count="0"]').waitFor({ timeout: 10_000 });
      await mkdir(ARTIFACTS, { recursive: true });
      const screenshot = join(ARTIFACTS, 'dashboard.png');
      await page.screenshot({ path: screenshot, fullPage: true });
      console.log(`dashboard screenshot: ${screenshot}`);
    } finally {
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  }, 60_000);

  it('fits the window: every column at 1,280 px, and nothing wider than the page at 420 px', async () => {
    const sized = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      await sized.goto(`${origin}/`);
      await sized.locator('#live.on').waitFor({ timeout: 10_000 });
      // Rows of every kind the tests above made: long texts, a waiting report's next attempt.
      await sized.locator('#messages tr').first().waitFor({ timeout: 10_000 });
      const measure = () =>
        sized.evaluate(`(() => {
          const table = document.getElementById('messages').closest('table');
          const right = (el) => el.getBoundingClientRect().right;
          return {
            width: document.documentElement.clientWidth,
            page: document.documentElement.scrollWidth,
            lastColumn: right(table.querySelector('thead th:last-child')),
            form: right(document.getElementById('send')),
            search: right(document.getElementById('search')),
            inbound: right(document.getElementById('inbound-section')),
          };
        })()`) as Promise<Record<string, number>>;
      const wide = await measure();
      expect(wide.lastColumn).toBeLessThanOrEqual(wide.width!);
      expect(wide.page).toBeLessThanOrEqual(wide.width!);

      await sized.setViewportSize({ width: 420, height: 800 });
      const narrow = await measure();
      expect(narrow.width).toBe(420);
      // The page does not scroll sideways; a table wider than it scrolls in its own box.
      expect(narrow.page).toBeLessThanOrEqual(420);
      for (const part of ['form', 'search', 'inbound']) expect({ part, right: Math.min(narrow[part]!, 420) }).toEqual({ part, right: narrow[part] });
      await mkdir(ARTIFACTS, { recursive: true });
      await sized.screenshot({ path: join(ARTIFACTS, 'dashboard-420.png'), fullPage: true });
    } finally {
      await sized.close();
    }
  }, 30_000);
});

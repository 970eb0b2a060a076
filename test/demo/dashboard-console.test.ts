/**
 * The demo mounts the package's operator console (`sms-outbox/dashboard`) at `/console/`
 * behind its key: the demo page's link opens it (the page hands the browser the key's
 * cookie), the console shows the message sent through the demo, and a request without the
 * key is refused.
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { chromiumMissing, dashboardBed, send } from './dashboard-page.js';

describe.skipIf(chromiumMissing !== null)('demo: the operator console', () => {
  const bed = dashboardBed({ noPageErrors: true });
  let origin: string;
  let page: Page;
  beforeAll(() => void ({ origin, page } = bed));

  it('refuses the console to a request without the demo key', async () => {
    const res = await fetch(`${origin}/console/`);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: 'DASHBOARD_FORBIDDEN' });
  });

  it('opens from the demo page and shows the hour and the simulated carrier', async () => {
    await send(origin, '/create', { profile_code: '12345', messages: [{ recipient: '254712345678', message: 'to the console' }] });
    await page.goto(`${origin}/`);
    await page.locator('#live.on').waitFor({ timeout: 10_000 });
    await page.click('#console-link');
    await page.waitForURL(/\/console\/$/);
    expect(Number(await page.locator('#total-accepted').innerText())).toBeGreaterThanOrEqual(1);
    await page.getByRole('link', { name: 'Carrier' }).click();
    await page.waitForURL(/\/console\/carrier$/);
    expect(await page.locator('#binds').innerText()).toContain('simulator');
  });
});

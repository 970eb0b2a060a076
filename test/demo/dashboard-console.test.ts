/**
 * The demo shows only the package's operator console (`sms-outbox/dashboard`), at
 * `/console/` behind its key: `/` hands the browser the key's cookie and opens it; the
 * console shows the messages sent through the demo, the simulated carrier, a subscriber's
 * reply sent through `POST /demo/mo` with its STOP on the opt-out list and a premium send
 * to them rejected; a request without the key is refused.
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/poll.js';
import { API_KEY, chromiumMissing, dashboardBed, send } from './dashboard-page.js';

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

  it('opens from / and shows the hour and the simulated carrier', async () => {
    await send(origin, '/create', { profile_code: '12345', messages: [{ recipient: '254712345678', message: 'to the console' }] });
    await page.goto(`${origin}/`);
    await page.waitForURL(/\/console\/$/);
    await eventually(async () => {
      await page.reload();
      return Number(await page.locator('#total-delivered').innerText()) >= 1;
    }, { what: 'the delivery counted on the overview' });
    expect(Number(await page.locator('#total-accepted').innerText())).toBeGreaterThanOrEqual(1);
    expect(await page.locator('#rate-route').innerText()).toContain('simulator');
    await page.getByRole('link', { name: 'Carrier' }).click();
    await page.waitForURL(/\/console\/carrier$/);
    expect(await page.locator('#binds').innerText()).toContain('simulator');
    await page.getByRole('link', { name: 'Principals' }).click();
    expect(await page.locator('#principal-table').innerText()).toContain('demo');
  });

  it('shows a subscriber\u2019s reply forwarded to /demo/inbound, their STOP on the opt-out list, and a premium send to them rejected', async () => {
    const subscriber = '254712300001';
    const reply = await fetch(`${origin}/demo/mo`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': API_KEY },
      body: JSON.stringify({ from: subscriber, to: '22021501', text: 'STOP' }),
    });
    expect(reply.status).toBe(204);
    await eventually(() => bed.demo.output().includes(`inbound.received ${subscriber} 22021501 STOP`), { timeoutMs: 10_000, what: 'the reply forwarded' });
    await page.goto(`${origin}/console/inbound`);
    const row = page.locator('#inbound-table tr', { hasText: subscriber });
    expect(await row.innerText()).toMatch(/22021501\s+STOP\s+delivered \(1 attempt\)/);
    expect(await page.locator('#opt-out-table').innerText()).toContain(subscriber);

    const [ref] = await send(origin, '/premium', { profile_code: '22021501', messages: [{ mobile_number: subscriber, message: 'Tip of the day' }] });
    await eventually(async () => {
      await page.goto(`${origin}/console/message?principal=demo&ref=${ref}`);
      return (await page.locator('#message').getAttribute('data-state')) === 'rejected';
    }, { what: 'the premium send rejected' });
    expect(await page.locator('#message').innerText()).toMatch(/opt/i);
  }, 60_000);
});

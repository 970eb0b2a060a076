/**
 * The dashboard's premium and inbound forms, in headless Chromium against the demo host as
 * a child process: both premium forms (messages with mobile_number, and the list `to`), and
 * a subscriber's STOP reply forwarded, listed as an opt-out, and rejecting the next send.
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, chromiumMissing, send, dashboardBed, type DashboardBed } from './dashboard-page.js';

describe.skipIf(chromiumMissing !== null)('demo dashboard', () => {
  const bed = dashboardBed({ noPageErrors: true });
  let origin: string;
  let page: Page;
  let demo: DashboardBed['demo'];
  beforeAll(() => void ({ origin, page, demo } = bed));

  it('sends from both premium forms: messages with mobile_number, and the parameter list `to`', async () => {
    await page.goto(`${origin}/`);
    await page.locator('#live.on').waitFor({ timeout: 10_000 });

    await page.selectOption('#endpoint', 'premium');
    await page.selectOption('#profile', '22021501');
    await page.fill('#recipient', '254712345600');
    await page.fill('#message', 'Premium, one');
    await page.fill('#external-id', 'prem-1');
    await page.click('#submit');
    await page.locator('#result[data-ref]').waitFor({ timeout: 10_000 });
    const one = (await page.locator('#result').getAttribute('data-ref'))!;
    const oneRow = page.locator(`#messages tr[data-ref="${one}"]`);
    await oneRow.waitFor({ timeout: 10_000 });
    expect(await oneRow.locator('.endpoint').textContent()).toBe('premium');
    expect(await oneRow.locator('.recipient').textContent()).toBe('254712345600');
    expect(await oneRow.locator('.external-id').textContent()).toBe('prem-1');

    // The list form: the labels say what the fields become.
    await page.selectOption('#endpoint', 'premium-list');
    expect(await page.locator('#recipient-label').textContent()).toBe('Recipients (to)');
    expect(await page.locator('#external-id-label').textContent()).toBe('message_id');
    await page.fill('#recipient', '254712345601, 254712345602 254712345603');
    await page.fill('#message', 'Premium, to three');
    await page.fill('#external-id', 'list-1');
    await page.click('#submit');
    await page.locator('#result[data-refs]').waitFor({ timeout: 10_000 });
    expect(await page.locator('#result').textContent()).toMatch(/^200: accepted /);
    const refs = (await page.locator('#result').getAttribute('data-refs'))!.split(' ');
    expect(refs).toHaveLength(3);
    const recipients: string[] = [];
    for (const ref of refs) {
      const row = page.locator(`#messages tr[data-ref="${ref}"][data-state="delivered"]`);
      await row.waitFor({ timeout: 20_000 });
      expect(await row.locator('.endpoint').textContent()).toBe('premium');
      // One message_id covers every number.
      expect(await row.locator('.external-id').textContent()).toBe('list-1');
      expect(await row.locator('.text').textContent()).toBe('Premium, to three');
      recipients.push((await row.locator('.recipient').textContent())!);
    }
    expect(recipients.sort()).toEqual(['254712345601', '254712345602', '254712345603']);
    // The API agrees: the list form's message_id is the messages' reference.
    const status = (await (await fetch(`${origin}/api/outbox/delivery-status?external_id=list-1`, { headers: { 'X-API-Key': API_KEY } })).json()) as { message_ref: string }[];
    expect(status.map((m) => m.message_ref).sort()).toEqual([...refs].sort());
  }, 60_000);

  it('shows a subscriber\u2019s reply forwarded to /demo/inbound, their STOP in the opt-out list, and a premium send to them rejected', async () => {
    await page.goto(`${origin}/`);
    await page.locator('#live.on').waitFor({ timeout: 10_000 });
    await page.locator('#inbound-section:not([hidden])').waitFor({ timeout: 10_000 });
    const subscriber = '254712300001';
    await page.fill('#mo-from', subscriber);
    await page.fill('#mo-to', '22021501');
    await page.fill('#mo-text', 'STOP');
    await page.click('#mo-submit');
    const row = page.locator('#inbound tr', { hasText: subscriber });
    await page.locator('#inbound tr .hook', { hasText: 'delivered (1 attempt)' }).waitFor({ timeout: 20_000 });
    expect(await row.locator('.text').textContent()).toBe('STOP');
    expect(await row.locator('.to').textContent()).toBe('22021501');
    await page.locator('#opt-outs li', { hasText: `${subscriber} from 22021501` }).waitFor({ timeout: 10_000 });
    expect(demo.output()).toContain(`inbound.received ${subscriber} 22021501 STOP`);

    const [ref] = await send(origin, '/premium', { profile_code: '22021501', messages: [{ mobile_number: subscriber, message: 'Tip of the day' }] });
    const message = page.locator(`tr[data-ref="${ref}"][data-state="rejected"]`);
    await message.waitFor({ timeout: 20_000 });
    expect(await message.locator('.reason-cell .reason').getAttribute('data-reason')).toBe('opted_out');
  }, 60_000);
});

/**
 * The operator console (`sms-outbox/dashboard`) in headless Chromium, mounted by a host at
 * `/admin/sms` behind its staff cookie: every view (principals and external-id search
 * included), one action each (cancel, remove an
 * opt-out, top up), the host's auth refusing a stranger, the CSRF and same-origin checks
 * refusing a forged action, keyboard use, and the layout at 360 px and 1,280 px
 * (screenshots in test-artifacts/).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, chromiumMissing, consoleErrorsOf, launchChromium } from '../demo/dashboard-page.js';
import { eventually } from '../helpers/poll.js';
import { createSmsDashboard } from '../../src/dashboard.js';
import { OptionError } from '../../src/index.js';
import { sendQuick, STAFF_COOKIE, startConsoleHost, type ConsoleHost } from './console-host.js';

describe.skipIf(chromiumMissing !== null)('the operator console in Chromium', () => {
  let host: ConsoleHost;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    [host, browser] = await Promise.all([startConsoleHost(), launchChromium()]);
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addCookies([{ ...STAFF_COOKIE, url: host.origin }]);
    page = await context.newPage();
    errors = consoleErrorsOf(page);
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await host?.close();
    expect(errors).toEqual([]);
  }, 30_000);

  it('refuses to be created without an auth hook or allowUnauthenticated', () => {
    let thrown: unknown;
    try {
      createSmsDashboard(host.sms, {});
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(OptionError);
    expect((thrown as OptionError).code).toBe('DASHBOARD_UNGUARDED');
    expect(() => createSmsDashboard(host.sms, { allowUnauthenticated: true })).not.toThrow();
  });

  it('answers a visitor the host\'s auth hook refuses 403 with a code, and shows nothing', async () => {
    const stranger = await browser.newPage();
    const answer = await stranger.goto(`${host.console}/`);
    expect(answer?.status()).toBe(403);
    expect(JSON.parse(await stranger.locator('body').innerText())).toMatchObject({ code: 'DASHBOARD_FORBIDDEN' });
    await stranger.close();
  });

  it('overview: the hour\'s and the day\'s counts, latencies and uPlot charts, the queue, delivery rates; light at first load', async () => {
    const [ref] = await sendQuick(host.origin, { profile_code: '12345', messages: [{ recipient: '254712345678', message: 'hi' }] });
    await eventually(async () => (await host.sms.storage.getMessage('acme', ref!))?.state === 'delivered', { what: 'the delivery' });
    let bytes = 0;
    const count = (response: { url(): string; body(): Promise<Buffer> }): void => void response.body().then((b) => (bytes += b.length), () => undefined);
    page.on('response', count);
    await page.goto(`${host.console}/`, { waitUntil: 'networkidle' });
    page.off('response', count);
    expect(Number(await page.locator('#total-accepted').innerText())).toBeGreaterThanOrEqual(1);
    expect(Number(await page.locator('#total-delivered').innerText())).toBeGreaterThanOrEqual(1);
    await expect.poll(() => page.locator('#chart-traffic .uplot canvas').count()).toBe(1);
    await expect.poll(() => page.locator('#chart-queue .uplot canvas').count()).toBe(1);
    for (const chart of ['#chart-latency', '#chart-day-traffic', '#chart-day-latency']) {
      await expect.poll(() => page.locator(`${chart} .uplot canvas`).count(), { message: chart }).toBe(1);
    }
    // The delivered message's two latencies, over the hour and over the day.
    for (const id of ['#latency-acceptToSubmit', '#latency-submitToFinal', '#day-latency-acceptToSubmit', '#day-latency-submitToFinal']) {
      expect({ id, text: await page.locator(id).innerText() }).toEqual({ id, text: expect.stringMatching(/^\d+(\.\d)? (ms|s|min) \/ \d+(\.\d)? (ms|s|min)$/) });
    }
    expect(Number(await page.locator('#day-total-accepted').innerText())).toBeGreaterThanOrEqual(1);
    expect(Number(await page.locator('#day-total-delivered').innerText())).toBeGreaterThanOrEqual(1);
    // At 1,280 px the day stands beside the hour.
    const [hourBox, dayBox] = [await page.locator('#hour').boundingBox(), await page.locator('#day').boundingBox()];
    expect(dayBox!.y).toBe(hourBox!.y);
    expect(dayBox!.x).toBeGreaterThan(hourBox!.x + hourBox!.width - 1);
    expect(await page.locator('#queue-transactional').innerText()).toBe('0');
    expect(await page.locator('#rate-country').innerText()).toContain('KE');
    expect(await page.locator('#rate-endpoint').innerText()).toContain('quick');
    expect(await page.locator('#rate-route').innerText()).toContain('simulator');
    expect(await page.locator('#total-creditSpent').innerText()).toBe('1');
    expect(bytes).toBeLessThan(200 * 1024);
    await page.screenshot({ path: join(ARTIFACTS, 'console-overview-1280.png'), fullPage: true });
    // The hour beside the day: the picture docs/dashboard.md shows.
    await page.locator('.pair').screenshot({ path: join(ARTIFACTS, 'console-hour-day-1280.png') });
  });

  it('carrier: the simulator\'s bind, bound, with the TPS in use', async () => {
    await page.goto(`${host.console}/carrier`);
    expect(await page.locator('#binds td[data-state="bound"]').count()).toBe(1);
    expect(await page.locator('#binds').innerText()).toContain('simulator');
    // The simulator's own read-out: unpaced, no window.
    expect(await page.locator('#binds tbody tr').innerText()).toMatch(/unpaced[\s\S]*0 \/ none/);
    expect(await page.locator('#tps').innerText()).toMatch(/^\d/);
    await page.screenshot({ path: join(ARTIFACTS, 'console-carrier-1280.png'), fullPage: true });
  });

  it('principals: each with its balance, today\'s and this month\'s units against its caps, limits, scopes, expiry', async () => {
    await page.goto(`${host.console}/principals`);
    const acme = page.locator('#principal-table tr', { hasText: 'acme' });
    const balance = Number(await page.locator('#balance-acme').innerText());
    expect(balance).toBe(await host.sms.credit!.balance('acme'));
    const today = Number(await page.locator('#today-acme').getAttribute('data-used'));
    expect(today).toBeGreaterThanOrEqual(1);
    expect(await page.locator('#today-acme').innerText()).toBe(`${today} / 1000`);
    expect(await page.locator('#month-acme').innerText()).toBe(`${today} / 20000`);
    expect(await acme.innerText()).toContain('600 / 1 min requests');
    const globex = await page.locator('#principal-table tr', { hasText: 'globex' }).innerText();
    await page.screenshot({ path: join(ARTIFACTS, 'console-principals-1280.png'), fullPage: true });
    expect(globex).toMatch(/expired[\s\S]*read[\s\S]*2020-01-01 00:00:00Z[\s\S]*no cap[\s\S]*5 \/ 1 min requests/);
  });

  it('inbound: a STOP shows as a message and an opt-out, and Remove takes the number off the list', async () => {
    await host.delivery.simulateInbound({ from: '254711000111', to: '22021501', text: 'STOP' });
    await eventually(async () => (await host.sms.optOuts.has('22021501', '254711000111')) === true, { what: 'the opt-out' });
    await page.goto(`${host.console}/inbound`);
    expect(await page.locator('#inbound-table').innerText()).toContain('STOP');
    const row = page.locator('#opt-out-table tr', { hasText: '254711000111' });
    await row.getByRole('button', { name: 'Remove' }).click();
    await page.waitForURL(/done=opted-in/);
    expect(await page.locator('#notice').innerText()).toContain('Removed');
    expect(await page.locator('#opt-out-table-empty').innerText()).toContain('Nobody');
    expect(await host.sms.optOuts.has('22021501', '254711000111')).toBe(false);
  });

  it('message lookup: a scheduled message with its parts and report; Cancel cancels it', async () => {
    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const [ref] = await sendQuick(host.origin, {
      profile_code: '12345', send_at: sendAt, messages: [{ recipient: '254712345679', message: 'later' }],
    });
    await page.goto(`${host.console}/message`);
    // By keyboard: the fields and the button are reachable and submit with Enter.
    await page.locator('#principal').focus();
    await page.keyboard.type('acme');
    await page.keyboard.press('Tab');
    await page.keyboard.type(ref!);
    await page.keyboard.press('Enter');
    await page.waitForURL(/ref=/);
    expect(await page.locator('#message').getAttribute('data-state')).toBe('scheduled');
    expect(await page.locator('#message-parts').innerText()).toContain('Parts');
    await page.getByRole('button', { name: 'Cancel this message' }).click();
    await page.waitForURL(/done=cancelled/);
    expect(await page.locator('#message').getAttribute('data-state')).toBe('cancelled');
    expect((await host.sms.storage.getMessage('acme', ref!))?.state).toBe('cancelled');
  });

  it('messages: lists a principal\'s messages newest first, each linked to its page', async () => {
    const refs = (await host.sms.storage.listMessages!({ principalId: 'acme', limit: 1000 })).messages.map((m) => m.ref);
    expect(refs.length).toBeGreaterThan(0);
    await page.goto(`${host.console}/messages?principal=acme`);
    const shown = await page.locator('#message-list tbody tr td:first-child').allInnerTexts();
    expect(shown).toEqual(refs.slice(0, 50));
    await page.locator('#message-list a').first().click();
    await page.waitForURL(/ref=/);
    expect(await page.locator('#message').getAttribute('data-state')).not.toBeNull();
  });

  it('messages: finds every message with an external id, with its reason', async () => {
    const refs = await sendQuick(host.origin, { profile_code: '12345', messages: [
      { recipient: '254712345670', message: 'a', external_id: 'batch-9' }, { recipient: '254712345671', message: 'b', external_id: 'batch-9' },
    ] });
    await page.goto(`${host.console}/messages`);
    await page.locator('#list-principal').fill('acme');
    await page.locator('#external-id').fill('batch-9');
    await page.getByRole('button', { name: 'List' }).click();
    await page.waitForURL(/external_id=batch-9/);
    const shown = await page.locator('#message-list tbody tr td:first-child').allInnerTexts();
    expect(shown.sort()).toEqual([...refs].sort());
    expect(await page.locator('#message-list').innerText()).toContain('batch-9');
  });

  it('credit: shows a balance, and Top up adds to it', async () => {
    await page.goto(`${host.console}/credit?principal=acme`);
    const before = Number(await page.locator('#balance').innerText());
    await page.locator('#units').fill('25');
    await page.getByRole('button', { name: 'Top up' }).click();
    await page.waitForURL(/done=topped-up/);
    expect(Number(await page.locator('#balance').innerText())).toBe(before + 25);
  });

  it('refuses an action with a wrong CSRF token, and one from another origin, storing nothing', async () => {
    await page.goto(`${host.console}/credit?principal=acme`);
    const before = await host.sms.credit!.balance('acme');
    const logged = errors.length;
    const forged = await page.evaluate(async (url) => {
      const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: '_csrf=forged&principal=acme&units=5' });
      return { status: res.status, body: await res.json() };
    }, `${host.console}/actions/top-up`);
    expect(forged).toEqual({ status: 403, body: { code: 'CSRF_TOKEN_INVALID', details: expect.any(String) } });
    // The browser logs the refused fetch; that line is this test's point, not a page error.
    expect(errors.splice(logged)).toEqual([expect.stringContaining('403')]);
    const token = await page.locator('input[name="_csrf"]').first().inputValue();
    const cross = await fetch(`${host.console}/actions/top-up`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'https://evil.example', Cookie: `${STAFF_COOKIE.name}=${STAFF_COOKIE.value}` },
      body: `_csrf=${token}&principal=acme&units=5`,
    });
    expect(cross.status).toBe(403);
    expect(await cross.json()).toMatchObject({ code: 'CROSS_ORIGIN' });
    expect(await host.sms.credit!.balance('acme')).toBe(before);
  });

  it('lays out at 360 px without sideways scrolling, and every view is reachable by keyboard', async () => {
    await page.setViewportSize({ width: 360, height: 800 });
    await page.goto(`${host.console}/`, { waitUntil: 'networkidle' });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await page.screenshot({ path: join(ARTIFACTS, 'console-overview-360.png'), fullPage: true });
    for (const view of ['carrier', 'principals']) {
      await page.goto(`${host.console}/${view}`);
      expect({ view, width: await page.evaluate('document.documentElement.scrollWidth') }).toEqual({ view, width: 360 });
    }
    await page.goto(`${host.console}/`, { waitUntil: 'networkidle' });
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement && document.activeElement.textContent')).toBe('Carrier');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/carrier$/);
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});

/**
 * The dashboard of a demo whose simulator expires every message, in headless Chromium: the
 * reason cell of `expired/expired` and the hour's counts of it; then, after a restart, the
 * expired message found in storage though the new process's list never saw it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo, stopDemo } from '../helpers/demo.js';
import { API_KEY, chromiumMissing, consoleErrorsOf, launchChromium } from './dashboard-page.js';

describe.skipIf(chromiumMissing !== null)('demo dashboard', () => {
  let dir: string;
  /** A demo whose every message ends `expired` with the reason `expired`. */
  let expiring: ReturnType<typeof startDemo>;
  let expiringOrigin: string;
  /** The message the expiring demo expired. */
  let expiredRef: string;
  let browser: Browser;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sms-outbox-dashboard-'));
    expiring = startDemo({ SMS_DB: join(dir, 'expiring.db'), SMS_API_KEY: API_KEY, SMS_SIM_OUTCOMES: 'expired:1' });
    [expiringOrigin, browser] = await Promise.all([expiring.origin, launchChromium()]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (expiring) await stopDemo(expiring.child);
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 30_000);

  it('does not repeat the state as its reason: expired/expired shows the description', async () => {
    const res = await fetch(`${expiringOrigin}/api/outbox/create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': API_KEY },
      body: JSON.stringify({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Too late' }] }),
    });
    expect(res.status).toBe(200);
    const [{ message_ref: ref }] = (await res.json()) as [{ message_ref: string }];
    expiredRef = ref;
    const expiringPage = await browser.newPage();
    const errors = consoleErrorsOf(expiringPage);
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

      // The hour's counts: one accepted, expired; none of those that ended was delivered.
      await expiringPage.locator('#count-expired[data-count="1"]').waitFor({ timeout: 10_000 });
      expect(await expiringPage.locator('#count-delivered').textContent()).toBe('0');
      expect(await expiringPage.locator('#rate').textContent()).toBe('0%');
      expect(await expiringPage.locator('#rate-of').textContent()).toBe('(0 delivered of 1 ended)');
      expect(errors).toEqual([]);
    } finally {
      await expiringPage.close();
    }
  }, 30_000);

  it('finds a message from before a restart, which the list never saw, in storage', async () => {
    expect(expiredRef).toBeDefined();
    await stopDemo(expiring.child);
    expiring = startDemo({ SMS_DB: join(dir, 'expiring.db'), SMS_API_KEY: API_KEY, SMS_SIM_OUTCOMES: 'expired:1' });
    expiringOrigin = await expiring.origin;
    const restarted = await browser.newPage();
    const errors = consoleErrorsOf(restarted);
    try {
      await restarted.goto(`${expiringOrigin}/`);
      await restarted.locator('#live.on').waitFor({ timeout: 10_000 });
      // The list and the hour's counts start empty: they are this process's events.
      await restarted.locator('#stats[data-accepted="0"]').waitFor({ timeout: 10_000 });
      expect(await restarted.locator('#messages tr').count()).toBe(0);
      expect(await restarted.locator('#page-info').textContent()).toBe('page 1 of 1 (0 messages)');

      await restarted.fill('#search-q', expiredRef);
      await restarted.click('#search-submit');
      const row = restarted.locator(`#found tr[data-ref="${expiredRef}"][data-state="expired"]`);
      await row.waitFor({ timeout: 10_000 });
      expect(await row.locator('.text').textContent()).toBe('Too late');
      expect(await row.locator('.callbacks').textContent()).toBe('none requested');
      expect(errors).toEqual([]);
    } finally {
      await restarted.close();
    }
  }, 60_000);
});

/**
 * The demo's dashboard, end to end: the demo host as a child process (SQLite in a temp
 * dir, simulated carrier), its page in headless Chromium, a message sent from the page's
 * form, and its row seen reaching `delivered` with its delivery report attempt. A second
 * demo whose simulator expires every message shows the reason cell of `expired/expired`.
 * The page shows the queue: a count when it connects, then each 5-second sample; the last
 * hour's counts per state and delivery rate; both premium forms; a search by ref and by
 * external id; the pages past the newest 50; a waiting report's next attempt; and it logs
 * no console error. A screenshot is kept in test-artifacts/.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type ConsoleMessage, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageRecord, NewMessage, SmsRouter } from '../../src/index.js';
import { HourStats, HOUR_MS } from '../../demo/dashboard/stats.js';
import { startDemo, stopDemo } from '../helpers/demo.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const API_KEY = 'dashboard-test-key';
/** Where the screenshot is kept (git-ignored). */
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/** Sends `body` to the demo's `/create` or `/premium`; returns the answer's refs. */
async function send(origin: string, path: '/create' | '/premium', body: unknown): Promise<string[]> {
  const res = await fetch(`${origin}/api/outbox${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': API_KEY },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { message_ref: string }[]).map((m) => m.message_ref);
}

/** The console errors and uncaught exceptions of `page`, as they come. */
function consoleErrorsOf(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() === 'error') errors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
  return errors;
}

const missing = existsSync(CHROMIUM) ? null : `Chromium not found at ${CHROMIUM} (apt-get install chromium)`;
if (missing !== null && process.env.SMS_OUTBOX_REQUIRE_SERVICES === '1') {
  throw new Error(`${missing}, and SMS_OUTBOX_REQUIRE_SERVICES=1 requires it`);
}
if (missing !== null) console.warn(`skipping the dashboard test: ${missing}`);

// The counts' window, with a clock the test holds: no browser needed.
describe('the dashboard\u2019s last hour', () => {
  /** The router's `on`, which is all HourStats uses, and a way to emit. */
  function fakeRouter(): { sms: SmsRouter; emit: (name: string, payload: unknown) => void } {
    const listeners = new Map<string, ((payload: unknown) => void)[]>();
    const sms = {
      on(name: string, listener: (payload: unknown) => void) {
        listeners.set(name, [...(listeners.get(name) ?? []), listener]);
        return sms;
      },
    } as unknown as SmsRouter;
    return { sms, emit: (name, payload) => listeners.get(name)?.forEach((listener) => listener(payload)) };
  }
  const message = (ref: string, createdAt: number, state?: string) =>
    (state === undefined ? { ref, createdAt } : { ref, createdAt, state }) as unknown as NewMessage & MessageRecord;

  it('counts each message once in its latest state, and lets it go an hour after it was accepted', () => {
    let now = 1_000_000_000;
    const { sms, emit } = fakeRouter();
    const stats = new HourStats(sms, () => now);
    expect(stats.counts()).toMatchObject({ accepted: 0, finished: 0, deliveryRate: null });

    emit('message.accepted', { message: message('a', now) });
    emit('message.accepted', { message: message('b', now) });
    emit('message.status', { message: message('a', now, 'submitted') });
    emit('message.status', { message: message('a', now, 'delivered') });
    // A late event of an earlier transition does not take it back.
    emit('message.status', { message: message('a', now, 'submitted') });
    now += 1_000;
    emit('message.accepted', { message: message('c', now) });
    emit('message.status', { message: message('b', now - 1_000, 'expired') });
    expect(stats.counts()).toMatchObject({
      accepted: 3,
      states: { queued: 1, submitted: 0, delivered: 1, expired: 1, undelivered: 0, rejected: 0, failed: 0 },
      finished: 2,
      delivered: 1,
      deliveryRate: 0.5,
    });

    // An hour after c was accepted: a and b, a second older, have left the window; c is at its edge.
    now += HOUR_MS;
    expect(stats.counts()).toMatchObject({ accepted: 1, states: { queued: 1 }, finished: 0, deliveryRate: null, since: now - HOUR_MS, at: now });
    // A message accepted before the window is not counted when its late event comes.
    emit('message.status', { message: message('old', now - HOUR_MS - 1, 'delivered') });
    expect(stats.counts().accepted).toBe(1);
  });

  it('leaves cancelled messages out of the delivery rate: they are no delivery\u2019s outcome', () => {
    const now = 1_000_000_000;
    const { sms, emit } = fakeRouter();
    const stats = new HourStats(sms, () => now);
    for (const [ref, state] of [['a', 'delivered'], ['b', 'delivered'], ['c', 'undelivered'], ['d', 'cancelled'], ['e', 'cancelled']] as const) {
      emit('message.accepted', { message: message(ref, now) });
      emit('message.status', { message: message(ref, now, state) });
    }
    expect(stats.counts()).toMatchObject({ accepted: 5, states: { delivered: 2, undelivered: 1, cancelled: 2 }, finished: 3, delivered: 2 });
    expect(stats.counts().deliveryRate).toBeCloseTo(2 / 3);
  });
});

describe.skipIf(missing !== null)('demo dashboard', () => {
  let dir: string;
  let demo: ReturnType<typeof startDemo>;
  let origin: string;
  /** A demo whose every message ends `expired` with the reason `expired`. */
  let expiring: ReturnType<typeof startDemo>;
  let expiringOrigin: string;
  /** The message the expiring demo expired. */
  let expiredRef: string;
  let browser: Browser;
  let page: Page;
  /** What `page` logged as errors over every test. */
  let pageErrors: string[];

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
    pageErrors = consoleErrorsOf(page);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (demo) await stopDemo(demo.child);
    if (expiring) await stopDemo(expiring.child);
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 30_000);

  it('sends a message from the form and shows it reach delivered, with its delivery report and the hour\u2019s counts', async () => {
    await page.goto(`${origin}/`);
    // The live stream is open (its snapshot arrived), so no change can be missed.
    await page.locator('#live.on').waitFor({ timeout: 10_000 });
    // The carrier: the simulator's one connection, bound.
    await page.locator('#carrier[data-state="bound"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('#carrier-name').textContent()).toBe('simulated carrier');
    expect(await page.locator('#carrier-state').textContent()).toMatch(/^simulator bound since /);
    // A fresh gateway: nothing accepted in the last hour, no rate yet.
    await page.locator('#stats[data-accepted="0"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('#rate').textContent()).toBe('none yet');
    expect(await page.locator('#count-delivered').textContent()).toBe('0');

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
    // The reason in words, as on every row; its code is the tooltip.
    expect(await row.locator('.reason-cell').textContent()).toBe('Message delivered to terminal');
    expect(await row.locator('.reason-cell .reason').getAttribute('title')).toBe('delivered_to_terminal');
    // No external_id was sent: the cell says so instead of echoing the ref.
    expect(await row.locator('.external-id').textContent()).toBe('none sent');
    expect(await row.locator('.text').textContent()).toBe('Dashboard test \u00e9t\u00e9');
    // The form asked for a report to the demo's own receiver, which answers 204.
    const sent = row.locator('.attempt[data-result="sent"]');
    await sent.waitFor({ timeout: 20_000 });
    expect(await sent.textContent()).toMatch(/^#1 sent 204 \(\d+ ms\)$/);
    // Reported nothing waits: no next attempt.
    expect(await row.locator('.next-attempt').count()).toBe(0);

    // The hour's counts followed it: one accepted, now delivered; every one that ended was.
    await page.locator('#count-delivered[data-count="1"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('#stats').getAttribute('data-accepted')).toBe('1');
    expect(await page.locator('#count-queued').textContent()).toBe('0');
    expect(await page.locator('#count-submitted').textContent()).toBe('0');
    expect(await page.locator('#rate').textContent()).toBe('100%');
    expect(await page.locator('#rate-of').textContent()).toBe('(1 delivered of 1 ended)');

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

  it('finds a message by its ref and by its external id', async () => {
    await page.goto(`${origin}/`);
    await page.locator('#live.on').waitFor({ timeout: 10_000 });
    const [first, second] = await send(origin, '/create', {
      profile_code: '12345',
      messages: [
        { recipient: '254712345610', message: 'Find me', external_id: 'search-me' },
        { recipient: '254712345611', message: 'Find me too', external_id: 'search-me' },
      ],
    });
    const [other] = await send(origin, '/create', { profile_code: '12345', messages: [{ recipient: '254712345612', message: 'Not me', external_id: 'search-not-me' }] });

    // By ref: that message alone.
    await page.fill('#search-q', second!);
    await page.click('#search-submit');
    await page.locator('#search-status[data-count]').waitFor({ timeout: 10_000 });
    expect(await page.locator('#search-status').getAttribute('data-count')).toBe('1');
    expect(await page.locator('#found tr').evaluateAll((rows) => rows.map((r) => (r as unknown as { dataset: { ref: string } }).dataset.ref))).toEqual([second]);
    expect(await page.locator('#found .text').textContent()).toBe('Find me too');

    // By external id: both messages that carry it, newest first, and not the other one.
    await page.fill('#search-q', '  search-me ');
    await page.click('#search-submit');
    await page.locator('#search-status[data-count="2"]').waitFor({ timeout: 10_000 });
    const found = await page.locator('#found tr').evaluateAll((rows) => rows.map((r) => (r as unknown as { dataset: { ref: string } }).dataset.ref));
    expect(found.sort()).toEqual([first, second].sort());
    expect(found).not.toContain(other);
    expect(await page.locator('#search-status').textContent()).toBe('2 messages with the ref or external id \u201csearch-me\u201d:');
    // The found rows follow the message as it changes.
    await page.locator(`#found tr[data-ref="${first}"][data-state="delivered"]`).waitFor({ timeout: 20_000 });

    // Nothing found says so.
    await page.fill('#search-q', 'no-such-reference');
    await page.click('#search-submit');
    await page.locator('#search-status[data-count="0"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('#search-status').textContent()).toBe('No message has the ref or external id \u201cno-such-reference\u201d.');
    expect(await page.locator('#found-table').isHidden()).toBe(true);

    // The search is a plain endpoint too; bad input is a 422 with a reason and a code.
    const empty = await fetch(`${origin}/demo/search?q=%20`);
    expect(empty.status).toBe(422);
    expect(await empty.json()).toEqual({ details: 'q: give one message_ref or external_id, 1 to 200 characters', code: 'VALIDATION_FAILED' });
    const repeated = await fetch(`${origin}/demo/search?q=a&q=b`);
    expect(repeated.status).toBe(422);
  }, 60_000);

  it('shows the messages past the newest 50 on the next page, and comes back to the live first page', async () => {
    const externalIds = () => page.locator('#messages .external-id').allTextContents();
    await page.goto(`${origin}/`);
    await page.locator('#live.on').waitFor({ timeout: 10_000 });
    const refs = await send(origin, '/create', {
      profile_code: '12345',
      messages: Array.from({ length: 55 }, (_, i) => ({ recipient: `2547123457${String(i).padStart(2, '0')}`, message: `Page test ${i}`, external_id: `page-${i}` })),
    });
    const newest = refs[54]!;
    const oldest = refs[0]!;
    await page.locator(`#messages tr[data-ref="${newest}"]`).waitFor({ timeout: 10_000 });
    expect(await page.locator('#messages tr').count()).toBe(50);
    // Newest first, live and after a reload alike, though the batch shares its millisecond.
    const batchNewestFirst = Array.from({ length: 55 }, (_, i) => `page-${54 - i}`);
    expect(await externalIds()).toEqual(batchNewestFirst.slice(0, 50));
    await page.reload();
    await page.locator('#live.on').waitFor({ timeout: 10_000 });
    expect(await externalIds()).toEqual(batchNewestFirst.slice(0, 50));
    await page.locator('.pager[data-pages="2"]').waitFor({ timeout: 10_000 });
    const listed = Number(/\((\d+) messages\)/.exec((await page.locator('#page-info').textContent())!)![1]);
    expect(listed).toBeGreaterThan(55);
    expect(listed).toBeLessThanOrEqual(100);
    expect(await page.locator('#newer').isDisabled()).toBe(true);
    expect(await page.locator(`#messages tr[data-ref="${oldest}"]`).count()).toBe(0);

    await page.click('#older');
    await page.locator('.pager[data-page="2"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('#page-info').textContent()).toBe(`page 2 of 2 (${listed} messages)`);
    expect(await page.locator('#messages tr').count()).toBe(listed - 50);
    // The oldest of the batch is here, with every message sent before it; the newest is not.
    expect(await page.locator(`#messages tr[data-ref="${oldest}"] .external-id`).textContent()).toBe('page-0');
    expect((await externalIds()).filter((id) => id.startsWith('page-'))).toEqual(batchNewestFirst.slice(50));
    expect(await page.locator(`#messages tr[data-ref="${newest}"]`).count()).toBe(0);
    expect(await page.locator('#older').isDisabled()).toBe(true);
    // A new message does not push into an older page.
    const [later] = await send(origin, '/create', { profile_code: '12345', messages: [{ recipient: '254712345699', message: 'While on page 2' }] });
    await page.locator('.pager[data-pages="2"]').filter({ hasText: `(${listed + 1} messages)` }).waitFor({ timeout: 10_000 });
    expect(await page.locator(`#messages tr[data-ref="${later}"]`).count()).toBe(0);

    await page.click('#newer');
    await page.locator('.pager[data-page="1"]').waitFor({ timeout: 10_000 });
    await page.locator(`#messages tr[data-ref="${later}"]`).waitFor({ timeout: 10_000 });
    expect(await page.locator('#messages tr').count()).toBe(50);

    // A page that is not a number is refused with a reason; one past the end is the last.
    const bad = await fetch(`${origin}/demo/messages?page=two`);
    expect(bad.status).toBe(422);
    expect(await bad.json()).toEqual({ details: 'page: must be a whole number from 1', code: 'VALIDATION_FAILED' });
    const past = (await (await fetch(`${origin}/demo/messages?page=99`)).json()) as { page: number; pages: number };
    expect(past).toMatchObject({ page: 2, pages: 2 });
  }, 60_000);

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

  it('heads the search results and the message list, each table under its own heading', async () => {
    await page.goto(`${origin}/`);
    await page.locator('#live.on').waitFor({ timeout: 10_000 });
    await page.fill('#search-q', 'search-me');
    await page.click('#search-submit');
    await page.locator('#search-status[data-count="2"]').waitFor({ timeout: 10_000 });
    // The nearest heading above each table, in document order.
    const headingOf = (tbody: string) =>
      page.evaluate(
        `document.evaluate('preceding::h2[1]', document.getElementById('${tbody}').closest('table'), null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue?.textContent ?? null`,
      );
    expect(await headingOf('found')).toBe('Search results');
    expect(await headingOf('messages')).toMatch(/^Messages/);
    expect(await page.locator('h2', { hasText: 'Search results' }).isVisible()).toBe(true);
    // Cleared, the results and their heading go.
    await page.click('#search-clear');
    expect(await page.locator('h2', { hasText: 'Search results' }).isVisible()).toBe(false);
  }, 30_000);

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

  it('logs no console error: not on a fresh page, not over every test above', async () => {
    const fresh = await browser.newPage();
    const errors = consoleErrorsOf(fresh);
    const failed: string[] = [];
    fresh.on('response', (res) => {
      if (res.status() >= 400) failed.push(`${res.status()} ${res.url()}`);
    });
    try {
      await fresh.goto(`${origin}/`);
      await fresh.locator('#live.on').waitFor({ timeout: 10_000 });
      await fresh.locator('#stats[data-accepted]').waitFor({ timeout: 10_000 });
      await fresh.click('#older');
      await fresh.locator('.pager[data-page="2"]').waitFor({ timeout: 10_000 });
      await fresh.fill('#search-q', 'search-me');
      await fresh.click('#search-submit');
      await fresh.locator('#search-status[data-count="2"]').waitFor({ timeout: 10_000 });
      await fresh.reload();
      await fresh.locator('#live.on').waitFor({ timeout: 10_000 });
      // No request for /favicon.ico: the page carries its icon.
      expect(failed).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await fresh.close();
    }
    // The favicon, when a browser asks anyway (on /metrics), is no error either.
    expect((await fetch(`${origin}/favicon.ico`)).status).toBe(204);
    // The one error the shared page logged: Chromium's line for the request the test made
    // the API refuse (422), which is the page doing its job.
    expect(pageErrors).toEqual([expect.stringMatching(/status of 422 .*\/api\/outbox\/create\)$/)]);
  }, 30_000);
});

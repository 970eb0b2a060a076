/**
 * The demo's dashboard, end to end: the demo host as a child process (SQLite in a temp
 * dir, simulated carrier), its page in headless Chromium, a message sent from the page's
 * form, and its row seen reaching `delivered` with its delivery report attempt and the
 * hour's counts; a refused request's reason; the same sends in `/metrics`; the queue, a
 * count when it connects, then each 5-second sample; a search by ref and by external id;
 * the pages past the newest 50; and no console error on the page over all of it.
 */
import type { Browser, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { chromiumMissing, consoleErrorsOf, send, dashboardBed } from './dashboard-page.js';

describe.skipIf(chromiumMissing !== null)('demo dashboard', () => {
  const bed = dashboardBed({ noPageErrors: false });
  let origin: string;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[];
  beforeAll(() => void ({ origin, browser, page, pageErrors } = bed));

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

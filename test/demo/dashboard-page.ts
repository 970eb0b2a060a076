/**
 * What the dashboard's browser tests share: the Chromium they drive (and the printed reason
 * they are skipped when it is not installed), the demo's API key, a send through the demo's
 * API, the console errors a page logs, where screenshots are kept, and a test file's demo
 * with its page ({@link dashboardBed}).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type ConsoleMessage, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { startDemo, stopDemo } from '../helpers/demo.js';

/** The Chromium binary: `CHROMIUM_PATH`, else the distribution's. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The key the tests' demos accept (`SMS_API_KEY`). */
export const API_KEY = 'dashboard-test-key';
/** Where the screenshots are kept (git-ignored). */
export const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/** Why the browser tests cannot run here, or null when Chromium is installed. */
export const chromiumMissing = existsSync(CHROMIUM) ? null : `Chromium not found at ${CHROMIUM} (apt-get install chromium)`;
if (chromiumMissing !== null && process.env.SMS_OUTBOX_REQUIRE_SERVICES === '1') {
  throw new Error(`${chromiumMissing}, and SMS_OUTBOX_REQUIRE_SERVICES=1 requires it`);
}
if (chromiumMissing !== null) console.warn(`skipping the dashboard test: ${chromiumMissing}`);

/** Starts headless Chromium without the sandbox, GPU or background traffic a test does not want. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
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
  });
}

/** Sends `body` to the demo's `/create` or `/premium`; returns the answer's refs. */
export async function send(origin: string, path: '/create' | '/premium', body: unknown): Promise<string[]> {
  const res = await fetch(`${origin}/api/outbox${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': API_KEY },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { message_ref: string }[]).map((m) => m.message_ref);
}

/** The console errors and uncaught exceptions of `page`, as they come. */
export function consoleErrorsOf(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() === 'error') errors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
  return errors;
}

/** A test file's demo (SQLite in a temp dir) and the page it drives, set before its first test. */
export interface DashboardBed {
  /** The demo child. */
  demo: ReturnType<typeof startDemo>;
  /** Where the demo listens. */
  origin: string;
  /** The Chromium the page is in. */
  browser: Browser;
  /** The page, shared by the file's tests. */
  page: Page;
  /** What `page` logged as errors over every test. */
  pageErrors: string[];
}

/**
 * Starts a demo and a page before the file's tests and stops them after. With
 * `noPageErrors`, the page must have logged no console error over the file's tests.
 */
export function dashboardBed(options: { noPageErrors: boolean }): DashboardBed {
  const bed = {} as DashboardBed;
  let dir: string | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sms-outbox-dashboard-'));
    bed.demo = startDemo({ SMS_DB: join(dir, 'demo.db'), SMS_API_KEY: API_KEY });
    [bed.origin, bed.browser] = await Promise.all([bed.demo.origin, launchChromium()]);
    bed.page = await bed.browser.newPage();
    bed.pageErrors = consoleErrorsOf(bed.page);
  }, 60_000);
  afterAll(async () => {
    await bed.browser?.close();
    if (bed.demo) await stopDemo(bed.demo.child);
    if (dir) await rm(dir, { recursive: true, force: true });
    if (options.noPageErrors) expect(bed.pageErrors).toEqual([]);
  }, 30_000);
  return bed;
}

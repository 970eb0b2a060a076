/**
 * What the dashboard's browser tests share: the Chromium they drive (and the printed reason
 * they are skipped when it is not installed), the demo's API key, a send through the demo's
 * API, the console errors a page logs, and where screenshots are kept.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type ConsoleMessage, type Page } from 'playwright-core';
import { expect } from 'vitest';

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

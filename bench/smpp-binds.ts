/**
 * Benchmark of several binds to one SMSC: how the submit rate of `SmppDelivery` scales with
 * `binds`, against the test SMSC answering each `submit_sm` `responseDelayMs` late, as a
 * carrier across a network does. With a window of `window` per bind, one bind can have at
 * most `window` submits awaiting their answer, so it sends at most `window / delay` a
 * second; each further bind adds that much, until the CPU is the limit.
 *
 * Run: `npx tsx bench/smpp-binds.ts` (1 and 4 binds). A harness can import
 * {@link benchSmppBinds} instead.
 */
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { SmppDelivery } from '../src/smpp.js';
import { numberedPart } from '../test/fixtures/parts.js';
import { startSmsc } from '../test/fixtures/smsc.js';

/** What one run measured. */
export interface SmppBindsBenchResult {
  /** Binds used. */
  binds: number;
  /** Parts submitted (and accepted). */
  messages: number;
  /** Submits accepted per second, from the first submit to the last answer. */
  submitsPerSec: number;
  /** The SMSC's answer delay, ms. */
  responseDelayMs: number;
  /** Outstanding submit_sm at most per bind. */
  window: number;
}

/** Options of {@link benchSmppBinds}. */
export interface SmppBindsBenchOptions {
  /** Binds to open; default 1. */
  binds?: number;
  /** Parts to submit; default 4,000. */
  messages?: number;
  /** The SMSC's answer delay, ms; default 20. */
  responseDelayMs?: number;
  /** Outstanding submit_sm at most per bind; default 10. */
  window?: number;
}

/** A typical one-part message: a one-time code. */
const part = (i: number) => numberedPart(i, { text: 'Your code is 4821. Asante!' });

/** Runs the benchmark: starts an SMSC, binds, submits every part at once, waits for every answer, stops. */
export async function benchSmppBinds(options: SmppBindsBenchOptions = {}): Promise<SmppBindsBenchResult> {
  const binds = options.binds ?? 1;
  const messages = options.messages ?? 4_000;
  const responseDelayMs = options.responseDelayMs ?? 20;
  const window = options.window ?? 10;
  const smsc = await startSmsc({ password: 'bench', quiet: true, responseDelayMs });
  const delivery = new SmppDelivery({ url: `smpp://bench:bench@127.0.0.1:${smsc.port}`, binds, window, waitTimeoutMs: 120_000 });
  try {
    await delivery.start({ receipt: async () => undefined, inbound: async () => undefined, error: () => undefined });
    await delivery.waitForBind(10_000);
    // Untimed: every bind's first exchange, and the code compiled.
    await Promise.all(Array.from({ length: binds * window * 2 }, (_, i) => delivery.submit(part(i))));
    const start = performance.now();
    await Promise.all(Array.from({ length: messages }, (_, i) => delivery.submit(part(i))));
    const seconds = (performance.now() - start) / 1000;
    return { binds, messages, submitsPerSec: Math.round(messages / seconds), responseDelayMs, window };
  } finally {
    await delivery.close();
    await smsc.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const binds of [1, 4]) console.log(JSON.stringify(await benchSmppBinds({ binds })));
}

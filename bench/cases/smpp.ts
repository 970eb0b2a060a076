/**
 * The SMPP cases: the raw library's rate (in the harness, and pinned like the router), the
 * adapter end to end against the test SMSC, and several binds to one SMSC.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatSpread, times, type CaseResult } from '../report.js';
import { spread } from '../stats.js';
import { log } from '../harness/log.js';
import { options, root } from '../harness/options.js';
import { runPinnedOnce } from '../harness/servers.js';
import { SkipError } from '../harness/skip.js';
import { otherSelected } from './catalog.js';
import { E2E_DEADLINE_MS, E2E_MESSAGES, E2E_WARMUP, endToEnd } from './e2e.js';

/** The SMPP section: the raw library rate (both ways), then the adapter end to end against the test SMSC. */
export async function smppCases(): Promise<CaseResult[]> {
  const out: CaseResult[] = [];
  const rawTitle = 'raw `smpp` library, bench/smpp-raw.ts benchSmppRaw(): one transceiver bind, window 50, in the harness process on core 1 with its own test SMSC';
  const pinnedTitle = 'raw `smpp` library, bench/servers/smpp-raw.ts: one transceiver bind, window 50, a child pinned to core 0 like the router, against the same test SMSC as e2e-smpp';
  const e2eTitle = 'end to end with the SMPP adapter (memory storage) against the test SMSC: HTTP accept to delivery report received';
  if (otherSelected.has('smpp-raw')) {
    if (!existsSync(join(root, 'bench', 'smpp-raw.ts'))) out.push({ name: 'smpp-raw', title: rawTitle, skipped: 'bench/smpp-raw.ts not there yet', notes: [] });
    else {
      try {
        const { benchSmppRaw } = (await import('../smpp-raw.js')) as typeof import('../smpp-raw.js');
        const rates: number[] = [];
        for (let run = 1; run <= options.runs; run++) {
          const r = await benchSmppRaw({ messages: E2E_MESSAGES, warmup: E2E_WARMUP, deadlineMs: E2E_DEADLINE_MS });
          rates.push(r.receiptsPerSec);
          log(`smpp-raw run ${run}: ${r.receiptsPerSec} receipts/s (${r.submitsPerSec} submits/s, median response ${r.medianResponseMs} ms)`);
        }
        out.push({ name: 'smpp-raw', title: rawTitle, messagesPerSec: spread(rates), notes: [`N = ${E2E_MESSAGES.toLocaleString('en-US')} per run after ${E2E_WARMUP.toLocaleString('en-US')} untimed; msg/s = receipts/s`] });
      } catch (error) {
        out.push({ name: 'smpp-raw', title: rawTitle, skipped: `bench/smpp-raw.ts failed: ${(error as Error).message}`, notes: [] });
      }
    }
  }
  if (!otherSelected.has('smpp-raw-pinned') && !otherSelected.has('e2e-smpp')) return out;
  if (!existsSync(join(root, 'src', 'smpp.ts')) || !existsSync(join(root, 'test', 'fixtures', 'smsc.ts'))) {
    const reason = 'SMPP adapter (src/smpp.ts) or test SMSC (test/fixtures/smsc.ts) not there yet';
    if (otherSelected.has('smpp-raw-pinned')) out.push({ name: 'smpp-raw-pinned', title: pinnedTitle, skipped: reason, notes: [] });
    if (otherSelected.has('e2e-smpp')) out.push({ name: 'e2e-smpp', title: e2eTitle, skipped: reason, notes: [] });
    return out;
  }
  const fixture = pathToFileURL(join(root, 'test', 'fixtures', 'smsc.ts')).href;
  const { startSmsc } = (await import(fixture)) as typeof import('../../test/fixtures/smsc.js');
  // Quiet: a JSON line per submit and per receipt, parsed here on core 1, would make the
  // SMSC (not the client under test) the bound of both the raw rate and e2e-smpp.
  const smsc = await startSmsc({ password: 'secret', quiet: true });
  try {
    await smsc.send({ cmd: 'set', receiptMode: 'auto' });
    if (otherSelected.has('smpp-raw-pinned')) {
      const raw: number[] = [];
      const cpus: number[] = [];
      const busy: number[] = [];
      const notes = [`N = ${E2E_MESSAGES.toLocaleString('en-US')} submit_sm per run after ${E2E_WARMUP.toLocaleString('en-US')} untimed; msg/s = receipts/s`];
      let reason: string | null = null;
      for (let run = 1; run <= options.runs && reason === null; run++) {
        const rate = await rawSmpp(smsc.port).catch((error: unknown) => {
          reason = error instanceof SkipError ? error.message : String(error);
          return null;
        });
        if (rate !== null) {
          raw.push(rate.perSec);
          cpus.push(rate.cpuSec);
          busy.push(rate.cpuSec / rate.seconds);
          if (rate.receipts < E2E_MESSAGES) notes.push(`run ${run}: ${rate.receipts}/${E2E_MESSAGES} receipts before the deadline`);
          log(`smpp-raw-pinned run ${run}: ${Math.round(rate.perSec)} msg/s (${rate.receipts} receipts in ${rate.seconds.toFixed(2)} s), client core ${Math.round((100 * rate.cpuSec) / rate.seconds)}% busy`);
        }
      }
      if (raw.length === 0) out.push({ name: 'smpp-raw-pinned', title: pinnedTitle, skipped: reason ?? 'no run', notes });
      else {
        const usPerMessage = spread(cpus.map((cpu) => (cpu * 1e6) / E2E_MESSAGES))!;
        notes.push(`the client's CPU per message: ${formatSpread(usPerMessage, (n) => String(Math.round(n)))} us`);
        out.push({ name: 'smpp-raw-pinned', title: pinnedTitle, messagesPerSec: spread(raw), cpuSec: spread(cpus), coreBusy: spread(busy), notes });
      }
    }
    if (otherSelected.has('e2e-smpp')) {
      out.push(await endToEnd('e2e-smpp', e2eTitle, { BENCH_SMPP_URL: `smpp://bench:secret@127.0.0.1:${smsc.port}` }));
    }
  } finally {
    await smsc.stop();
  }
  return out;
}

/** One run of the raw SMPP client child. */
async function rawSmpp(port: number): Promise<{ perSec: number; receipts: number; seconds: number; cpuSec: number }> {
  const env = { BENCH_SMPP_PORT: String(port), BENCH_MESSAGES: String(E2E_MESSAGES), BENCH_WARMUP: String(E2E_WARMUP), BENCH_DEADLINE_MS: String(E2E_DEADLINE_MS) };
  const event = await runPinnedOnce<{ receipts: number; seconds: number; cpuSec: number }>('smpp-raw', env);
  return { perSec: event.receipts / event.seconds, receipts: event.receipts, seconds: event.seconds, cpuSec: event.cpuSec };
}

/**
 * Several binds to one SMSC (bench/smpp-binds.ts): SmppDelivery's submit rate with 4 binds,
 * and with 1 in the same runs, against an SMSC answering 20 ms late with a window of 10 per
 * bind, so one bind is bounded by its window (500 a second) and each bind adds as much.
 */
export async function smppBindsCase(): Promise<CaseResult> {
  const title = 'SmppDelivery with 4 binds to one SMSC (bench/smpp-binds.ts benchSmppBinds()): submits/s, the SMSC answering 20 ms late, window 10 per bind';
  const messages = options.quick ? 1_000 : 4_000;
  const four: number[] = [];
  const one: number[] = [];
  try {
    const { benchSmppBinds } = (await import('../smpp-binds.js')) as typeof import('../smpp-binds.js');
    for (let run = 1; run <= options.runs; run++) {
      const single = await benchSmppBinds({ binds: 1, messages });
      const several = await benchSmppBinds({ binds: 4, messages });
      one.push(single.submitsPerSec);
      four.push(several.submitsPerSec);
      log(`smpp-binds run ${run}: 4 binds ${several.submitsPerSec} submits/s, 1 bind ${single.submitsPerSec} submits/s (${(several.submitsPerSec / single.submitsPerSec).toFixed(1)}x)`);
    }
  } catch (error) {
    return { name: 'smpp-binds', title, skipped: `bench/smpp-binds.ts failed: ${(error as Error).message}`, notes: [] };
  }
  const oneMedian = spread(one)!.median;
  const fourSpread = spread(four)!;
  return {
    name: 'smpp-binds',
    title,
    messagesPerSec: fourSpread,
    notes: [`N = ${messages.toLocaleString('en-US')} parts per run; 1 bind in the same runs: ${Math.round(oneMedian).toLocaleString('en-US')} submits/s (4 binds ${times(fourSpread.median / oneMedian)}); the window bounds one bind at 500/s`],
  };
}

/** End to end: HTTP accept -> carrier -> receipt -> delivery report at a local receiver. */
import { createServer, type Server } from 'node:http';
import { cpuSeconds, resetPeakRss, rss, spread } from '../stats.js';
import { formatSpread, type CaseResult } from '../report.js';
import { HEADERS, PATH, sendBody } from '../harness/bodies.js';
import { log } from '../harness/log.js';
import { options } from '../harness/options.js';
import { startServer, type ServerScript } from '../harness/servers.js';
import { freshStorage } from '../harness/services.js';
import { SkipError } from '../harness/skip.js';

/** A delivery-report receiver on 127.0.0.1 that counts distinct reports by message_ref. */
class ReportReceiver {
  readonly server: Server;
  #seen = new Set<string>();
  #prefix = '';
  #target = 0;
  #waiter: (() => void) | null = null;
  posts = 0;

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.posts++;
        try {
          const report = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { message_ref?: string; external_id?: string } };
          const ref = report.data?.message_ref;
          if (ref !== undefined && (report.data?.external_id ?? '').startsWith(this.#prefix)) this.#seen.add(ref);
        } catch {
          // A malformed report is the router's bug, but it must not stop the count.
        }
        res.writeHead(204).end();
        if (this.#waiter && this.#seen.size >= this.#target) this.#waiter();
      });
    });
    this.server.keepAliveTimeout = 60_000;
  }

  async listen(): Promise<string> {
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done));
    const address = this.server.address();
    return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/dlr`;
  }

  /** Starts counting reports whose external_id starts with `prefix`. */
  expect(prefix: string, target: number): void {
    this.#seen = new Set();
    this.#prefix = prefix;
    this.#target = target;
  }

  get count(): number {
    return this.#seen.size;
  }

  /** Resolves when the target is reached or `deadlineMs` passes (then with false). */
  wait(deadlineMs: number): Promise<boolean> {
    if (this.#seen.size >= this.#target) return Promise.resolve(true);
    return new Promise((done) => {
      const timer = setTimeout(() => {
        this.#waiter = null;
        done(false);
      }, deadlineMs);
      this.#waiter = () => {
        clearTimeout(timer);
        this.#waiter = null;
        done(true);
      };
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((done) => this.server.close(() => done()));
  }
}

/** Posts `total` messages in 100-message requests, four requests at a time; returns how many were accepted. */
async function sendMessages(port: number, total: number, prefix: string, callbackUrl: string): Promise<number> {
  const perRequest = 100;
  let next = 0;
  let accepted = 0;
  const worker = async () => {
    while (next < total) {
      const count = Math.min(perRequest, total - next);
      const base = next;
      next += count;
      const body = sendBody(count, `${prefix}-${base}`, callbackUrl);
      const response = await fetch(`http://127.0.0.1:${port}${PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...HEADERS },
        body,
      });
      await response.arrayBuffer();
      if (response.ok) accepted += count;
      else throw new Error(`send answered ${response.status}`);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return accepted;
}

/** Per-run figures of an end-to-end case. */
interface E2eRun {
  perSec: number;
  cpu: number | null;
  peakMb: number | null;
  seconds: number;
}

/** Messages timed per end-to-end run. */
export const E2E_MESSAGES = options.quick ? 1_000 : 10_000;
/** How long an end-to-end run may take to receive every report. */
export const E2E_DEADLINE_MS = options.quick ? 30_000 : 60_000;
/**
 * Messages sent through, untimed, before each end-to-end run and each raw SMPP run, so both
 * are measured on optimised code. Each run is a fresh process: with a warm-up of 200, V8's
 * optimising compiler still took 28% of the router's core during the timed 5,000 (perf), and
 * the figure was half the steady one.
 */
export const E2E_WARMUP = options.quick ? 1_000 : 10_000;

/** Runs the end-to-end case with the memory-storage router and `env`'s carrier. */
/** End to end through the router of `script` (its storage fresh for every run), with the carrier `env` selects. */
export async function endToEnd(name: string, title: string, env: Record<string, string>, script: ServerScript = 'memory'): Promise<CaseResult> {
  const receiver = new ReportReceiver();
  const url = await receiver.listen();
  const result: E2eRun[] = [];
  const notes: string[] = [
    `N = ${E2E_MESSAGES.toLocaleString('en-US')} messages per run after ${E2E_WARMUP.toLocaleString('en-US')} untimed, 100 per request, 4 requests in flight`,
  ];
  try {
    for (let run = 1; run <= options.runs; run++) {
      const storage = await freshStorage(script);
      const server = await startServer(script, { ...env, ...storage.env });
      try {
        // Warm-up: a batch all the way through, which also proves the pipeline works.
        receiver.expect(`warm${run}`, E2E_WARMUP);
        await sendMessages(server.port, E2E_WARMUP, `warm${run}`, url);
        if (!(await receiver.wait(30_000))) {
          throw new SkipError(`warm-up: ${receiver.count}/${E2E_WARMUP} delivery reports within 30 s${server.stderr() ? `; server: ${server.stderr().split('\n').slice(-2).join(' / ')}` : ''}`);
        }
        resetPeakRss(server.pid);
        const prefix = `e2e${run}`;
        receiver.expect(prefix, E2E_MESSAGES);
        const cpu0 = cpuSeconds(server.pid);
        const t0 = performance.now();
        await sendMessages(server.port, E2E_MESSAGES, prefix, url);
        const acceptedAt = performance.now();
        const complete = await receiver.wait(E2E_DEADLINE_MS);
        const seconds = (performance.now() - t0) / 1000;
        const cpu1 = cpuSeconds(server.pid);
        const memory = rss(server.pid);
        const perSec = receiver.count / seconds;
        result.push({ perSec, cpu: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0, peakMb: memory?.peakMb ?? null, seconds });
        if (!complete) {
          notes.push(`run ${run}: only ${receiver.count}/${E2E_MESSAGES} reports within ${E2E_DEADLINE_MS / 1000} s (rate counts those); no further runs`);
        }
        log(
          `${name} run ${run}: ${Math.round(perSec)} msg/s end to end (${receiver.count}/${E2E_MESSAGES} reports in ${seconds.toFixed(2)} s; ` +
            `accepted in ${((acceptedAt - t0) / 1000).toFixed(2)} s), cpu ${result.at(-1)!.cpu?.toFixed(2) ?? '?'} s`,
        );
        // An incomplete run spent the whole deadline; more would only spend the budget again.
        if (!complete) break;
      } finally {
        await server.stop();
        await storage.cleanup();
      }
    }
  } catch (error) {
    const reason = error instanceof SkipError ? error.message : `failed: ${(error as Error).message}`;
    log(`${name}: skipped: ${reason}`);
    if (result.length === 0) return { name, title, skipped: reason, notes };
    notes.push(`later runs skipped: ${reason}`);
  } finally {
    await receiver.close();
  }
  const usPerMessage = spread(result.flatMap((r) => (r.cpu === null ? [] : [(r.cpu * 1e6) / E2E_MESSAGES])));
  if (usPerMessage !== null) notes.push(`the server's CPU per message: ${formatSpread(usPerMessage, (n) => String(Math.round(n)))} us`);
  return {
    name,
    title,
    notes,
    messagesPerSec: spread(result.map((r) => r.perSec)),
    cpuSec: spread(result.map((r) => r.cpu ?? NaN)),
    coreBusy: spread(result.map((r) => (r.cpu ?? NaN) / r.seconds)),
    peakRssMb: spread(result.map((r) => r.peakMb ?? NaN)),
  };
}

/**
 * Benchmark of the raw `smpp` package: how fast one transceiver bind submits `submit_sm`
 * and takes back their receipts, against the test SMSC (a child process on 127.0.0.1).
 * It is the ceiling the SMPP adapter works under, measured without the adapter.
 *
 * Run: `npx tsx bench/smpp-raw.ts`. A harness can import {@link benchSmppRaw} instead.
 */
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import smpp, { type PDU, type Session } from 'smpp';
import { startSmsc } from '../test/fixtures/smsc.js';

/** What one run measured. */
export interface SmppRawBenchResult {
  /** submit_sm sent (and answered). */
  messages: number;
  /** Outstanding submit_sm at most. */
  window: number;
  /** submit_sm_resp per second, from the first submit to the last response. */
  submitsPerSec: number;
  /** Receipts per second, from the first submit to the last receipt. */
  receiptsPerSec: number;
  /** Median ms from a submit_sm to its response. */
  medianResponseMs: number;
}

/** Options of {@link benchSmppRaw}. */
export interface SmppRawBenchOptions {
  /** Messages to submit; default 5,000. */
  messages?: number;
  /** Messages sent through first, untimed, so the timed ones run on compiled code; default 0. */
  warmup?: number;
  /** Outstanding submit_sm at most; default 50. */
  window?: number;
  /** Give up after this many ms (the run stays bounded); default 60,000. */
  deadlineMs?: number;
}

/** Runs the benchmark: starts the SMSC, binds, warms up, submits, waits for every receipt, stops. */
export async function benchSmppRaw(options: SmppRawBenchOptions = {}): Promise<SmppRawBenchResult> {
  const messages = options.messages ?? 5_000;
  const window = options.window ?? 50;
  const deadlineMs = options.deadlineMs ?? 60_000;
  const smsc = await startSmsc({ password: 'bench', quiet: true });
  let session: Session | null = null;
  try {
    await smsc.send({ cmd: 'set', receiptMode: 'auto' });
    session = smpp.connect({ host: '127.0.0.1', port: smsc.port });
    // The same socket option the adapter sets, so the comparison is of the code, not of Nagle.
    session.socket.setNoDelay(true);
    await bind(session);
    const bound = session;
    let receipts = 0;
    let lastReceiptAt = 0;
    /** The running phase's completion check, told of every receipt. */
    let onReceipt = (): void => undefined;
    bound.on('deliver_sm', (pdu: PDU) => {
      bound.send(pdu.response());
      receipts++;
      lastReceiptAt = performance.now();
      onReceipt();
    });
    /** Submits `count` with at most `window` unanswered; resolves once all are answered and receipted. */
    const submitAll = (count: number, latencies: number[]): Promise<number> => {
      const firstReceipt = receipts;
      let sent = 0;
      let answered = 0;
      let lastResponseAt = 0;
      return new Promise<number>((resolve, reject) => {
        const deadline = setTimeout(
          () => reject(new Error(`bench deadline: ${answered} answered, ${receipts - firstReceipt} receipts of ${count}`)),
          deadlineMs,
        );
        const finishIfDone = (): void => {
          if (answered === count && receipts - firstReceipt >= count) {
            clearTimeout(deadline);
            resolve(lastResponseAt);
          }
        };
        onReceipt = finishIfDone;
        const fill = () => {
          while (sent < count && sent - answered < window) {
            const sentAt = performance.now();
            sent++;
            const pdu = new smpp.PDU('submit_sm', {
              source_addr_ton: 5,
              source_addr: 'BENCH',
              dest_addr_ton: 1,
              dest_addr_npi: 1,
              destination_addr: `2547${String(sent).padStart(8, '0')}`,
              registered_delivery: 1,
              data_coding: 0,
              short_message: smpp.encodings.ASCII.encode('Your code is 4821. Asante!'),
            });
            bound.send(pdu, (response) => {
              if (response.command_status !== 0) {
                reject(new Error(`submit refused: ${response.command_status}`));
                return;
              }
              answered++;
              lastResponseAt = performance.now();
              latencies.push(lastResponseAt - sentAt);
              fill();
              finishIfDone();
            });
          }
        };
        fill();
      });
    };
    if ((options.warmup ?? 0) > 0) await submitAll(options.warmup!, []);
    const latencies: number[] = [];
    const start = performance.now();
    const lastResponseAt = await submitAll(messages, latencies);
    latencies.sort((a, b) => a - b);
    return {
      messages,
      window,
      submitsPerSec: Math.round((messages / (lastResponseAt - start)) * 1000),
      receiptsPerSec: Math.round((messages / (lastReceiptAt - start)) * 1000),
      medianResponseMs: Number((latencies[Math.floor(latencies.length / 2)] ?? 0).toFixed(3)),
    };
  } finally {
    session?.destroy();
    await smsc.stop();
  }
}

/** Binds as a transceiver; listeners are added before the connection can open. */
function bind(session: Session): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    session.once('error', reject);
    session.once('connect', () =>
      session.send(new smpp.PDU('bind_transceiver', { system_id: 'bench', password: 'bench' }), (response) =>
        response.command_status === 0 ? resolve() : reject(new Error(`bind failed: ${response.command_status}`)),
      ),
    );
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await benchSmppRaw();
  console.log(JSON.stringify(result, null, 2));
}

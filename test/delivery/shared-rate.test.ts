import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { RedisSubmitPermits } from '../../src/index.js';
import { SmppDelivery } from '../../src/smpp.js';
import { numberedPart } from '../fixtures/parts.js';
import { startSmsc, type SmscEvent, type SmscHandle } from '../fixtures/smsc.js';
import { eventually } from '../helpers/poll.js';
import { connectTestRedis, REDIS_URL } from '../helpers/services.js';

// One carrier account's tps shared by gateway instances through Redis: the rate is
// measured where the carrier sees it, at the SMSC.

const sender = fileURLToPath(new URL('../fixtures/paced-sender.ts', import.meta.url));

const redis = await connectTestRedis('shared-rate tests');
const { sendCommand, prefix: PREFIX, unreachable } = redis;
afterAll(() => redis.close());

const smscs: SmscHandle[] = [];
const children: ChildProcessWithoutNullStreams[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill();
  await Promise.all(smscs.splice(0).map((smsc) => smsc.stop()));
});

type Submit = Extract<SmscEvent, { event: 'submit' }>;

/** Submits per second at the SMSC, from its first submit to its last. */
function measuredRate(smsc: SmscHandle): { count: number; perSecond: number } {
  const times = smsc.events.filter((e): e is Submit => e.event === 'submit').map((e) => e.at).sort((x, y) => x - y);
  return { count: times.length, perSecond: ((times.length - 1) / (times.at(-1)! - times[0]!)) * 1000 };
}

/** One instance in its own process; resolves once bound, with a `go` that resolves when it is done. */
async function instance(env: Record<string, string>): Promise<{ go: () => Promise<number> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', sender], { env: { ...process.env, REDIS_URL, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout });
  const next = (event: string) =>
    new Promise<{ accepted?: number }>((resolve, reject) => {
      const onLine = (line: string) => {
        const parsed = JSON.parse(line) as { event: string; accepted?: number };
        if (parsed.event !== event) return;
        lines.off('line', onLine);
        resolve(parsed);
      };
      lines.on('line', onLine);
      child.once('exit', (code) => reject(new Error(`paced sender exited (${String(code)}) before "${event}": ${stderr}`)));
    });
  await next('ready');
  return {
    go: async () => {
      const done = next('done');
      child.stdin.write('go\n');
      return (await done).accepted!;
    },
  };
}

/**
 * These measure time. A busy machine (the suite's other worker, CI) can only make the senders
 * late, never early, so a rate over the limit fails every try; a rate under it, or a slot
 * late by a few milliseconds, may be the machine and is tried again before it fails.
 */
const TIMED = { retry: 2 };
/** A rate key of its own for each try, so that a retry does not inherit the last try's slots. */
let tries = 0;
const freshKey = (name: string): string => `${PREFIX}${name}-${++tries}`;

(unreachable === null ? describe : describe.skip)('one tps shared through Redis', () => {
  it('two instances in two processes submit within 5% of the shared tps, measured at the SMSC', TIMED, async () => {
    const smsc = await startSmsc({ password: 'secret' });
    smscs.push(smsc);
    const env = { SMSC_PORT: String(smsc.port), TPS: '100', COUNT: '200', SHARED: '1', RATE_KEY: freshKey('account-a') };
    const [one, two] = await Promise.all([instance(env), instance(env)]);
    const accepted = await Promise.all([one.go(), two.go()]);
    expect(accepted).toEqual([200, 200]);
    // The SMSC's own lines may trail the senders' by a moment.
    await eventually(() => measuredRate(smsc).count === 400, { what: '400 submits seen by the SMSC' });
    const { perSecond } = measuredRate(smsc);
    expect(perSecond).toBeGreaterThan(95);
    expect(perSecond).toBeLessThan(105);
  });

  it('hands out slots 1/tps apart to every caller of one key', TIMED, async () => {
    const key = freshKey('slots');
    const [one, two] = [new RedisSubmitPermits({ sendCommand, key, tps: 50 }), new RedisSubmitPermits({ sendCommand, key, tps: 50 })];
    const waits = await Promise.all(Array.from({ length: 5 }, (_, i) => (i % 2 === 0 ? one : two).reserve()));
    waits.sort((x, y) => x - y);
    waits.forEach((wait, i) => expect(Math.abs(wait - i * 20), `slot ${i}: ${wait} ms`).toBeLessThan(5));
  });

  it('books no slot further ahead than maxAheadMs: a caller past it waits, then books', TIMED, async () => {
    const permits = new RedisSubmitPermits({ sendCommand, key: freshKey('ahead'), tps: 50, maxAheadMs: 50 });
    const started = Date.now();
    const waits = await Promise.all(Array.from({ length: 6 }, () => permits.reserve()));
    expect(Math.max(...waits)).toBeLessThanOrEqual(50);
    // The sixth slot is 100 ms out: it was booked no sooner than 50 ms from the start.
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('paces each instance at its share while Redis cannot be reached, and reports it once', TIMED, async () => {
    const smsc = await startSmsc({ password: 'secret' });
    smscs.push(smsc);
    const delivery = new SmppDelivery({
      url: `smpp://gw:secret@127.0.0.1:${smsc.port}`,
      tps: 80,
      sharedRate: { sendCommand: async () => Promise.reject(new Error('ECONNREFUSED')), key: freshKey('down'), instances: 2 },
    });
    const errors: unknown[] = [];
    await delivery.start({ receipt: async () => undefined, inbound: async () => undefined, error: (error) => errors.push(error) });
    await delivery.waitForBind(5_000);
    await Promise.all(Array.from({ length: 41 }, (_, i) => delivery.submit(numberedPart(i))));
    await delivery.close();
    await eventually(() => measuredRate(smsc).count === 41, { what: '41 submits seen by the SMSC' });
    const { perSecond } = measuredRate(smsc);
    expect(perSecond).toBeGreaterThan(36);
    expect(perSecond).toBeLessThan(44);
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/Shared submit rate unavailable/);
  });

  it('refuses a sharedRate without tps, or with a bad instance count, when the adapter is built', () => {
    expect(() => new SmppDelivery({ url: 'smpp://a@h', sharedRate: { sendCommand } })).toThrow(/needs "tps"/);
    expect(() => new SmppDelivery({ url: 'smpp://a@h', tps: 10, sharedRate: { sendCommand, instances: 0 } })).toThrow(/instances/);
    expect(() => new SmppDelivery({ url: 'smpp://a@h', tps: 10, sharedRate: { sendCommand, kee: 'x' } as never })).toThrow(/Did you mean `key`/);
  });
});

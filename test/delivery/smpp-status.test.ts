/**
 * The SMPP adapter's read-out for operators (`status()`) against a real SMSC: each bind's
 * state and since when, the adapter's TPS budget and each bind's sends a second, its window
 * and what awaits an answer in it, through a drop and a reconnect.
 */
import { describe, expect, it } from 'vitest';
import type { BindStatus } from '../../src/delivery/contract.js';
import type { SmppDelivery } from '../../src/delivery/smpp/adapter.js';
import { part, smsc, startAdapter, submitsSince, useSmsc } from './smpp-smsc.js';

useSmsc();

/** Resolves with the adapter's status once `condition` holds of it; fails after `timeoutMs`. */
async function statusWhen(adapter: SmppDelivery, condition: (binds: BindStatus[]) => boolean, what: string, timeoutMs = 5_000): Promise<BindStatus[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const binds = adapter.status();
    if (condition(binds)) return binds;
    if (Date.now() > deadline) throw new Error(`status not seen within ${timeoutMs} ms: ${what}; last: ${JSON.stringify(binds)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('SmppDelivery.status against a real SMSC', () => {
  it('shows each bind bound with the TPS budget and window, what is in flight, and a drop as reconnecting', async () => {
    const started = Date.now();
    const { adapter } = await startAdapter({ binds: 2, window: 4, tps: 50 });
    await adapter.waitForBind();
    const bound = adapter.status();
    expect(bound.map((b) => [b.bind, b.state, b.submits, b.tpsLimit, b.window, b.inFlight])).toEqual([
      ['transceiver.1', 'bound', true, 50, 4, 0],
      ['transceiver.2', 'bound', true, 50, 4, 0],
    ]);
    for (const b of bound) expect(b.since).toBeGreaterThanOrEqual(started);

    await smsc.send({ cmd: 'set', hold: true });
    const from = smsc.events.length;
    const held = [0, 1, 2].map((i) => adapter.submit(part({ recipient: `25470000030${i}` })));
    const settled = Promise.allSettled(held);
    await submitsSince(from, 3);
    const busy = await statusWhen(adapter, (binds) => binds.reduce((n, b) => n + b.inFlight, 0) === 3, 'three in flight');
    expect(busy.reduce((n, b) => n + b.tpsInUse, 0)).toBeGreaterThan(0);

    await smsc.send({ cmd: 'drop' });
    await settled;
    await smsc.send({ cmd: 'set', hold: false });
    const down = await statusWhen(adapter, (binds) => binds.some((b) => b.state === 'reconnecting'), 'a bind reconnecting');
    expect(down.every((b) => b.inFlight === 0)).toBe(true);
    await statusWhen(adapter, (binds) => binds.every((b) => b.state === 'bound'), 'both bound again');
    const ack = await adapter.submit(part());
    expect(ack.bind).toMatch(/^transceiver\.[12]$/);
  });

  it('names a separate receiver as one that does not submit, and a bind before its first bind as connecting', async () => {
    await smsc.send({ cmd: 'set', password: 'changed' });
    const { adapter } = await startAdapter({ bindMode: 'separate' });
    expect(adapter.status().map((b) => [b.bind, b.state, b.submits, b.window, b.tpsLimit])).toEqual([
      ['transmitter', 'connecting', true, 50, null],
      ['receiver', 'connecting', false, null, null],
    ]);
    await smsc.send({ cmd: 'set', password: 'secret' });
    await adapter.waitForBind(5_000);
    expect(adapter.status().map((b) => b.state)).toEqual(['bound', 'bound']);
    await adapter.close();
    expect(adapter.status().map((b) => b.state)).toEqual(['closed', 'closed']);
  });
});

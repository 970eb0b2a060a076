/**
 * The SMPP adapter against a real SMSC (the `smpp` package's server, in a child process):
 * binds: a wrong password, waiting for a bind, drops and reconnects, separate binds, and close.
 */
import { describe, expect, it } from 'vitest';
import { DeliveryError } from '../../src/delivery/contract.js';
import { part, rejection, smsc, startAdapter, submitsSince, useSmsc } from './smpp-smsc.js';

useSmsc();

describe('SmppDelivery against a real SMSC', () => {
  it('reports a wrong password clearly, keeps retrying, and binds once the SMSC accepts', async () => {
    await smsc.send({ cmd: 'set', password: 'changed' });
    const from = smsc.events.length;
    const { adapter, record } = await startAdapter();
    await record.until(() => record.errors.some((e) => /SMPP bind failed: ESME_RINVPASWD/.test(e.message)), 'bind error');
    // A second refused bind proves it retries after the failure.
    await smsc.waitFor((e) => e.event === 'bind' && !e.ok && smsc.events.slice(from).filter((x) => x.event === 'bind').length >= 2, 5_000, from);
    expect(adapter.bound).toBe(false);

    await smsc.send({ cmd: 'set', password: 'secret' });
    await adapter.waitForBind(5_000);
    const ack = await adapter.submit(part());
    expect(ack.carrierId).toMatch(/^[0-9A-F]+$/);
  });

  it('waits for the bind when submitting before it, and rejects retryably when none comes in time', async () => {
    const { adapter: early } = await startAdapter();
    // Not awaited bind: the submit itself waits for it.
    await expect(early.submit(part())).resolves.toMatchObject({ carrierId: expect.any(String) });

    await smsc.send({ cmd: 'set', password: 'changed' });
    const { adapter: refused } = await startAdapter({ waitTimeoutMs: 300 });
    const error = await rejection(refused.submit(part()));
    expect(error.permanent).toBe(false);
    expect(error.message).toMatch(/not bound/);
  });

  it('rejects in-flight submits retryably when the SMSC drops the connection, then reconnects', async () => {
    const { adapter, record } = await startAdapter();
    await adapter.waitForBind();
    await smsc.send({ cmd: 'set', hold: true });
    const from = smsc.events.length;
    const inFlight = [0, 1, 2].map((i) => adapter.submit(part({ recipient: `25470000020${i}` })));
    const outcomes = Promise.allSettled(inFlight);
    await submitsSince(from, 3);

    await smsc.send({ cmd: 'drop' });
    for (const settled of await outcomes) {
      expect(settled.status).toBe('rejected');
      const error = (settled as PromiseRejectedResult).reason as DeliveryError;
      expect(error).toBeInstanceOf(DeliveryError);
      expect(error.permanent).toBe(false);
    }
    expect(record.errors.some((e) => /connection lost|failed/.test(e.message))).toBe(true);

    await smsc.send({ cmd: 'set', hold: false });
    await adapter.waitForBind(5_000);
    const ack = await adapter.submit(part());
    expect(ack.carrierId).toMatch(/^[0-9A-F]+$/);
  });

  it('works with separate transmitter and receiver binds', async () => {
    await smsc.send({ cmd: 'set', receiptMode: 'auto' });
    const from = smsc.events.length;
    const { adapter, record } = await startAdapter({ bindMode: 'separate' });
    const ack = await adapter.submit(part());
    // The SMSC may also hand this receiver a receipt an earlier test's session left undelivered,
    // so wait for this message's own receipt rather than the first one.
    await record.until(() => record.receipts.some((r) => r.carrierId === ack.carrierId), 'receipt over the receiver bind');
    const binds = smsc.events.slice(from).filter((e) => e.event === 'bind').map((e) => (e as { mode: string }).mode);
    expect(binds.sort()).toEqual(['receiver', 'transmitter']);
  });

  it('close() unbinds, the SMSC sees the unbind, and later submits reject', async () => {
    const { adapter, record } = await startAdapter();
    await adapter.waitForBind();
    const from = smsc.events.length;
    await adapter.close();
    await smsc.waitFor((e) => e.event === 'unbind', 5_000, from);
    await smsc.waitFor((e) => e.event === 'session_closed', 5_000, from);
    expect(adapter.bound).toBe(false);
    await rejection(adapter.submit(part()));
    expect(record.errors).toEqual([]);
    await adapter.close();
  });

  it('close() leaves no socket and no timer behind, even mid-reconnect', async () => {
    const sockets = () => process.getActiveResourcesInfo().filter((r) => r.startsWith('TCP')).length;
    // Record the adapter's own timers (unref'd ones are not listed as active resources).
    const timers: NodeJS.Timeout[] = [];
    const real = { setTimeout: globalThis.setTimeout, setInterval: globalThis.setInterval };
    for (const name of ['setTimeout', 'setInterval'] as const) {
      globalThis[name] = ((...args: unknown[]) => {
        const timer = Reflect.apply(real[name], globalThis, args) as NodeJS.Timeout;
        if (new Error().stack?.includes('src/delivery/smpp')) timers.push(timer);
        return timer;
      }) as typeof setTimeout & typeof setInterval;
    }
    try {
      const before = sockets();
      const { adapter, record } = await startAdapter({ enquireLinkMs: 50, reconnectMinMs: 5_000 });
      await adapter.submit(part());
      expect(sockets()).toBeGreaterThan(before);
      await smsc.send({ cmd: 'drop' });
      // Now a reconnect is scheduled, seconds away: close() must cancel it.
      await record.until(() => record.errors.length > 0, 'the drop reported');
      await adapter.close();
      expect(sockets()).toBeLessThanOrEqual(before);
      expect(timers.length).toBeGreaterThan(0);
      const live = timers.filter((timer) => !(timer as unknown as { _destroyed: boolean })._destroyed);
      expect(live).toEqual([]);
    } finally {
      Object.assign(globalThis, real);
    }
  });
});

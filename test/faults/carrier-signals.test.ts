/**
 * What an operator sees of a carrier outage, against a real SMSC (the `smpp` package's
 * server, in a child process) behind a TCP proxy the test cuts and restores: the bind gauge
 * goes 1 -> 0 -> 1, the reconnect counter counts the way back, and the logs say it in three
 * kinds of line: the outage once at error, each failed retry at debug, the rebind at info.
 */
import { pino } from 'pino';
import * as client from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { SmppDelivery } from '../../src/smpp.js';
import type { CarrierConnectionEvent, ErrorEvent } from '../../src/index.js';
import { startSmsc, type SmscHandle } from '../fixtures/smsc.js';
import { createGateway, type TestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';
import { TcpProxy } from './tcp-proxy.js';

type Line = Record<string, unknown> & { level: number; msg: string; event?: string; attempt?: number };

const DEBUG = 20;
const INFO = 30;
const ERROR = 50;

let smsc: SmscHandle | undefined;
let proxy: TcpProxy | undefined;
let gateway: TestGateway | undefined;

afterEach(async () => {
  await gateway?.sms.close();
  await proxy?.close();
  await smsc?.stop();
  gateway = proxy = smsc = undefined;
});

/** The value of the carrier gauge or counter for the transceiver bind, or null when the series does not exist. */
async function sample(registry: client.Registry, name: string): Promise<number | null> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const found = (metric?.values ?? []).find((v) => v.labels.bind === 'transceiver');
  return found === undefined ? null : found.value;
}

describe('a carrier outage, as operators see it', () => {
  it('moves the bind gauge 1 -> 0 -> 1, counts one reconnect, and logs error once, debug per retry, info when back', async () => {
    smsc = await startSmsc({ password: 'secret' });
    proxy = await TcpProxy.start(smsc.port);
    const registry = new client.Registry();
    const lines: Line[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
    const delivery = new SmppDelivery({
      url: `smpp://gateway:secret@127.0.0.1:${proxy.port}`,
      reconnectMinMs: 50,
      reconnectMaxMs: 200,
    });
    gateway = createGateway({ delivery, logger, metrics: { client, registry } });
    const connections: CarrierConnectionEvent[] = [];
    const errors: ErrorEvent[] = [];
    gateway.sms.on('carrier.connection', (change) => connections.push(change)).on('error', (event) => errors.push(event));

    // Up: the gauge is 1 and the counter exists at 0 before any reconnect.
    await gateway.sms.ready();
    await delivery.waitForBind(5_000);
    await eventually(async () => (await sample(registry, 'sms_outbox_carrier_bound')) === 1);
    expect(await sample(registry, 'sms_outbox_carrier_reconnects_total')).toBe(0);
    expect(lines.filter((l) => l.level === INFO).map((l) => l.msg)).toEqual(['storage ready', 'carrier transceiver bound']);

    // Down: the gauge is 0 while every reconnect fails.
    proxy.cut();
    await eventually(() => connections.some((c) => c.state === 'unbound' && c.attempt >= 3), { timeoutMs: 5_000 });
    expect(await sample(registry, 'sms_outbox_carrier_bound')).toBe(0);
    expect(delivery.bound).toBe(false);

    // Back: the gauge is 1 again and one reconnect is counted.
    proxy.restore();
    await delivery.waitForBind(5_000);
    await eventually(async () => (await sample(registry, 'sms_outbox_carrier_bound')) === 1);
    expect(await sample(registry, 'sms_outbox_carrier_reconnects_total')).toBe(1);

    const changes = lines.filter((l) => l.event === 'carrier.connection');
    const failed = changes.filter((l) => l.state === 'unbound');
    // The outage: one error line, then a debug line per failed retry, counted on.
    expect(failed[0]).toMatchObject({ level: ERROR, bind: 'transceiver', attempt: 1, msg: 'carrier transceiver down; reconnecting' });
    expect(failed.length).toBeGreaterThanOrEqual(3);
    expect(failed.slice(1).map((l) => [l.level, l.attempt])).toEqual(failed.slice(1).map((_, i) => [DEBUG, i + 2]));
    expect(lines.filter((l) => l.level >= ERROR)).toHaveLength(1);
    // Back: one info line.
    expect(changes.at(-1)).toMatchObject({ level: INFO, state: 'bound', reconnect: true, msg: 'carrier transceiver bound again' });
    expect(changes.filter((l) => l.state === 'bound')).toHaveLength(2);
    // Every line says where it comes from.
    expect(lines.every((l) => l.module === 'sms-outbox')).toBe(true);

    // `error` listeners still hear of each failure, marked with the bind.
    expect(errors.length).toBe(failed.length);
    expect(errors.every((e) => e.source === 'delivery' && e.code === 'CARRIER_FAILED' && e.bind === 'transceiver')).toBe(true);
  });

  it('has a gauge per bind when transmitter and receiver bind apart', async () => {
    smsc = await startSmsc({ password: 'secret' });
    const registry = new client.Registry();
    const delivery = new SmppDelivery({ url: `smpp://gateway:secret@127.0.0.1:${smsc.port}`, bindMode: 'separate' });
    gateway = createGateway({ delivery, metrics: { client, registry } });
    await gateway.sms.ready();
    await eventually(async () => {
      const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === 'sms_outbox_carrier_bound');
      const values = Object.fromEntries((metric?.values ?? []).map((v) => [v.labels.bind, v.value]));
      return values.transmitter === 1 && values.receiver === 1;
    });
  });
});

/**
 * `RoutedDelivery`'s read-out for operators: each route's connections with the route's name
 * (from its adapter's `status()`), and an ack that names the route and bind that took a part.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RoutedDelivery } from '../../src/delivery/routes/routed-delivery.js';
import { SimulatorDelivery } from '../../src/delivery/simulator.js';
import { outgoingPart } from '../fixtures/parts.js';

const open: RoutedDelivery[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((routed) => routed.close()));
});

describe('RoutedDelivery.status', () => {
  it('gives each route\u2019s binds with the route, and names the route and bind in each ack', async () => {
    const routed = new RoutedDelivery({
      routes: { kenya: { delivery: new SimulatorDelivery({ tps: 100, outcomes: { delivered: 1 } }), prefixes: ['254'] }, rest: { delivery: new SimulatorDelivery({ outcomes: { delivered: 1 } }) } },
      default: 'rest',
    });
    open.push(routed);
    await routed.start({ receipt: async () => undefined, inbound: async () => undefined, error: () => undefined });
    const ack = await routed.submit(outgoingPart({ ref: 'r1', principalId: 'p1', profileCode: 'P', text: 'hi', concatRef: 1, recipient: '254712345678' }));
    expect(ack).toMatchObject({ carrierId: expect.stringMatching(/^kenya:/), route: 'kenya', bind: 'simulator' });
    const status = routed.status();
    expect(status.map((b) => [b.route, b.bind, b.state, b.tpsLimit, b.window])).toEqual([
      ['kenya', 'simulator', 'bound', 100, null],
      ['rest', 'simulator', 'bound', null, null],
    ]);
    expect(status[0]!.tpsInUse).toBe(0.1);
    expect(status[1]!.tpsInUse).toBe(0);
  });
});

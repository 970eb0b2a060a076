import { afterEach, describe, expect, it } from 'vitest';
import {
  DeliveryError,
  RoutedDelivery,
  carrierIdSpellings,
  normalizeCarrierId,
  type CarrierReceipt,
  type ConnectionChange,
  type DeliveryAdapter,
  type DeliveryHandlers,
  type OutgoingPart,
  type RouteChange,
  type SubmitAck,
} from '../../src/index.js';
import * as promClient from 'prom-client';
import { eventually } from '../helpers/poll.js';
import { createGateway } from '../helpers/gateway.js';
import { outgoingPart } from '../fixtures/parts.js';

/** A carrier the test drives: records parts, issues ids from a counter, reports what it is told. */
class FakeCarrier implements DeliveryAdapter {
  readonly parts: OutgoingPart[] = [];
  handlers: DeliveryHandlers | null = null;
  /** Throw this from the next submits, when set. */
  failWith: unknown = null;
  submitsPerSecond: number | undefined;
  closed = false;
  #next = 0xa0000000;

  constructor(submitsPerSecond?: number) {
    this.submitsPerSecond = submitsPerSecond;
  }

  async start(handlers: DeliveryHandlers): Promise<void> {
    this.handlers = handlers;
  }

  async submit(part: OutgoingPart): Promise<SubmitAck> {
    if (this.failWith !== null) throw this.failWith;
    this.parts.push(part);
    return { carrierId: (this.#next++).toString(16).toUpperCase() };
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  connection(change: ConnectionChange): void {
    this.handlers!.connection!(change);
  }

  receipt(receipt: CarrierReceipt): Promise<void> {
    return this.handlers!.receipt(receipt);
  }
}

/** A one-part message to `recipient`, its ref named after it. */
function part(recipient: string, extra: Partial<OutgoingPart> = {}): OutgoingPart {
  return outgoingPart({ ref: `ref-${recipient}`, recipient, ...extra });
}

interface Started {
  routed: RoutedDelivery;
  receipts: CarrierReceipt[];
  connections: ConnectionChange[];
  routes: RouteChange[];
  errors: unknown[];
}

async function started(routed: RoutedDelivery): Promise<Started> {
  const out: Started = { routed, receipts: [], connections: [], routes: [], errors: [] };
  await routed.start({
    receipt: async (receipt) => void out.receipts.push(receipt),
    inbound: async () => undefined,
    error: (error) => void out.errors.push(error),
    connection: (change) => void out.connections.push(change),
    route: (change) => void out.routes.push(change),
  });
  return out;
}

const unbound = (bind: string): ConnectionChange => ({ bind, state: 'unbound', error: new Error('lost'), attempt: 1 });
const bound = (bind: string, reconnect = true): ConnectionChange => ({ bind, state: 'bound', reconnect });

describe('RoutedDelivery: choosing a route', () => {
  it('sends each recipient to the route of its longest matching prefix, else the default', async () => {
    const [a, b, c] = [new FakeCarrier(), new FakeCarrier(), new FakeCarrier()];
    const { routed } = await started(
      new RoutedDelivery({
        routes: { a: { delivery: a, prefixes: ['2547', '25470'] }, b: { delivery: b, prefixes: ['254701'] }, c: { delivery: c } },
        default: 'c',
      }),
    );
    await routed.submit(part('254700000001'));
    await routed.submit(part('254701000001'));
    await routed.submit(part('254720000001'));
    await routed.submit(part('255700000001'));
    expect(a.parts.map((p) => p.recipient)).toEqual(['254700000001', '254720000001']);
    expect(b.parts.map((p) => p.recipient)).toEqual(['254701000001']);
    expect(c.parts.map((p) => p.recipient)).toEqual(['255700000001']);
  });

  it('sends a recipient to the route of its country when no prefix takes it, read from the number when the part does not say', async () => {
    const [safaricom, kenya, nigeria, rest] = [new FakeCarrier(), new FakeCarrier(), new FakeCarrier(), new FakeCarrier()];
    const { routed } = await started(
      new RoutedDelivery({
        routes: {
          safaricom: { delivery: safaricom, prefixes: ['25471'] },
          kenya: { delivery: kenya, countries: ['KE'] },
          nigeria: { delivery: nigeria, countries: ['NG'] },
          rest: { delivery: rest },
        },
        default: 'rest',
      }),
    );
    await routed.submit(part('254712345678', { country: 'KE' }));
    await routed.submit(part('254733123456', { country: 'KE' }));
    await routed.submit(part('2348031234567'));
    await routed.submit(part('12025550123', { country: 'US' }));
    expect(safaricom.parts.map((p) => p.recipient)).toEqual(['254712345678']);
    expect(kenya.parts.map((p) => p.recipient)).toEqual(['254733123456']);
    expect(nigeria.parts.map((p) => p.recipient)).toEqual(['2348031234567']);
    expect(rest.parts.map((p) => p.recipient)).toEqual(['12025550123']);
  });

  it('sends a profile routed on its own to that route, before any prefix', async () => {
    const [a, premium] = [new FakeCarrier(), new FakeCarrier()];
    const { routed } = await started(
      new RoutedDelivery({ routes: { a: { delivery: a, prefixes: ['254'] }, premium: { delivery: premium, profiles: ['22021501'] } } }),
    );
    await routed.submit(part('254700000001', { profileCode: '22021501' }));
    await routed.submit(part('254700000002'));
    expect(premium.parts.map((p) => p.recipient)).toEqual(['254700000001']);
    expect(a.parts.map((p) => p.recipient)).toEqual(['254700000002']);
  });

  it("asks the host's function first (a ported number), and leaves the rest to the rules", async () => {
    const [a, b] = [new FakeCarrier(), new FakeCarrier()];
    const ported = new Set(['254700000009']);
    const { routed } = await started(
      new RoutedDelivery({
        routes: { a: { delivery: a, prefixes: ['25470'] }, b: { delivery: b, prefixes: ['25473'] } },
        select: async (p) => (ported.has(p.recipient) ? 'b' : undefined),
      }),
    );
    await routed.submit(part('254700000009'));
    await routed.submit(part('254700000001'));
    expect(b.parts.map((p) => p.recipient)).toEqual(['254700000009']);
    expect(a.parts.map((p) => p.recipient)).toEqual(['254700000001']);
  });

  it('refuses a recipient no route takes permanently, naming it, so the message ends rejected', async () => {
    const { routed } = await started(new RoutedDelivery({ routes: { a: { delivery: new FakeCarrier(), prefixes: ['25470'] } } }));
    const error = await routed.submit(part('255700000001')).catch((e: unknown) => e);
    expect(DeliveryError.is(error)).toBe(true);
    expect(error).toMatchObject({
      permanent: true,
      outcome: { state: 'rejected', reason: 'delivery_impossible', description: 'No route for recipient 255700000001' },
    });
  });

  it('retries, and reports, a route function that names no route or fails', async () => {
    let answer: () => string = () => 'nowhere';
    const [a] = [new FakeCarrier()];
    const out = await started(new RoutedDelivery({ routes: { a: { delivery: a } }, default: 'a', select: () => answer() }));
    const unknown = await out.routed.submit(part('254700000001')).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ permanent: false, message: expect.stringContaining('"nowhere"') });
    expect(out.errors).toHaveLength(1);
    answer = () => {
      throw new Error('lookup down');
    };
    const failed = await out.routed.submit(part('254700000001')).catch((e: unknown) => e);
    expect(failed).toMatchObject({ permanent: false });
    expect(a.parts).toHaveLength(0);
  });

  it('keeps every part of a multipart message on the route its first part took', async () => {
    const [a, b] = [new FakeCarrier(), new FakeCarrier()];
    let route = 'a';
    const { routed } = await started(new RoutedDelivery({ routes: { a: { delivery: a }, b: { delivery: b } }, select: () => route }));
    await routed.submit(part('254700000001', { ref: 'm1', index: 0, count: 3 }));
    // The host's answer changes between parts (a portability database updated): the message stays.
    route = 'b';
    await routed.submit(part('254700000001', { ref: 'm1', index: 1, count: 3 }));
    await routed.submit(part('254700000001', { ref: 'm1', index: 2, count: 3 }));
    expect(a.parts.map((p) => p.index)).toEqual([0, 1, 2]);
    // Its last part went: a new message follows the new answer.
    await routed.submit(part('254700000001', { ref: 'm2' }));
    expect(b.parts.map((p) => p.ref)).toEqual(['m2']);
  });
});

describe('RoutedDelivery: carrier ids and receipts', () => {
  it('qualifies carrier ids with the route, so two carriers issuing the same id stay apart', async () => {
    const [a, b] = [new FakeCarrier(), new FakeCarrier()];
    const out = await started(new RoutedDelivery({ routes: { a: { delivery: a, prefixes: ['25470'] }, b: { delivery: b, prefixes: ['25473'] } } }));
    const fromA = await out.routed.submit(part('254700000001'));
    const fromB = await out.routed.submit(part('254730000001'));
    expect(fromA.carrierId).toBe('a:A0000000');
    expect(fromB.carrierId).toBe('b:A0000000');
    // The receipt names the id in decimal, as SMPP receipts often do: still the same part.
    await b.receipt({ carrierId: '2684354560', outcome: { state: 'delivered', reason: 'delivered_to_terminal', description: 'ok' } });
    expect(out.receipts.map((r) => r.carrierId)).toEqual(['b:2684354560']);
    expect(carrierIdSpellings(out.receipts[0]!.carrierId)).toContain(normalizeCarrierId(fromB.carrierId));
    expect(carrierIdSpellings(out.receipts[0]!.carrierId)).not.toContain(normalizeCarrierId(fromA.carrierId));
  });

  it("passes each carrier's connection changes on with the route's name", async () => {
    const [a, b] = [new FakeCarrier(), new FakeCarrier()];
    const out = await started(new RoutedDelivery({ routes: { a: { delivery: a }, b: { delivery: b } } }));
    a.connection(bound('transceiver.2', false));
    expect(out.connections).toEqual([{ bind: 'transceiver.2', state: 'bound', reconnect: false, route: 'a' }]);
  });
});

describe('RoutedDelivery: failover', () => {
  it("sends a route's messages to its fallback while every bind that submits is down, and back once one is up", async () => {
    const [a, b] = [new FakeCarrier(), new FakeCarrier()];
    const out = await started(new RoutedDelivery({ routes: { a: { delivery: a, prefixes: ['25470'], fallback: 'b' }, b: { delivery: b } } }));
    expect(out.routes).toEqual([
      { route: 'a', state: 'up' },
      { route: 'b', state: 'up' },
    ]);
    a.connection(bound('transmitter.1', false));
    a.connection(bound('transmitter.2', false));
    a.connection(bound('receiver', false));
    a.connection(unbound('transmitter.1'));
    await out.routed.submit(part('254700000001'));
    expect(a.parts).toHaveLength(1);
    a.connection(unbound('transmitter.2'));
    expect(out.routes.at(-1)).toEqual({ route: 'a', state: 'down', reason: 'unbound', via: 'b' });
    const ack = await out.routed.submit(part('254700000002'));
    expect(ack.carrierId).toMatch(/^b:/);
    expect(b.parts.map((p) => p.recipient)).toEqual(['254700000002']);
    a.connection(bound('transmitter.2'));
    expect(out.routes.at(-1)).toEqual({ route: 'a', state: 'up' });
    await out.routed.submit(part('254700000003'));
    expect(a.parts.map((p) => p.recipient)).toEqual(['254700000001', '254700000003']);
    expect(out.routed.routeStates()).toEqual({ a: { state: 'up', via: 'a' }, b: { state: 'up', via: 'b' } });
  });

  it('fails over after throttleLimit throttled refusals in a row, and tries the route again after retryAfterMs', async () => {
    const [a, b] = [new FakeCarrier(), new FakeCarrier()];
    const out = await started(
      new RoutedDelivery({ routes: { a: { delivery: a, fallback: 'b' }, b: { delivery: b } }, default: 'a', throttleLimit: 2 }),
    );
    a.failWith = new DeliveryError('SMPP submit_sm throttled: ESME_RTHROTTLED', { retryAfterMs: 60 });
    await expect(out.routed.submit(part('254700000001'))).rejects.toMatchObject({ retryAfterMs: 60 });
    await expect(out.routed.submit(part('254700000001'))).rejects.toMatchObject({ retryAfterMs: 60 });
    expect(out.routes.at(-1)).toEqual({ route: 'a', state: 'down', reason: 'throttled', via: 'b' });
    await out.routed.submit(part('254700000001'));
    expect(b.parts).toHaveLength(1);
    a.failWith = null;
    // The route comes back by itself when the carrier's pause is over.
    await eventually(() => out.routes.at(-1)?.state === 'up', { what: 'route a up again' });
    await out.routed.submit(part('254700000002'));
    expect(a.parts.map((p) => p.recipient)).toEqual(['254700000002']);
  });

  it('keeps a multipart message on its route while that route is up, and moves its remaining parts only when it goes down', async () => {
    const [a, b] = [new FakeCarrier(), new FakeCarrier()];
    const out = await started(new RoutedDelivery({ routes: { a: { delivery: a, fallback: 'b' }, b: { delivery: b } }, default: 'a' }));
    a.connection(bound('transceiver', false));
    await out.routed.submit(part('254700000001', { ref: 'm', index: 0, count: 3 }));
    await out.routed.submit(part('254700000001', { ref: 'm', index: 1, count: 3 }));
    a.connection(unbound('transceiver'));
    await out.routed.submit(part('254700000001', { ref: 'm', index: 2, count: 3 }));
    expect(a.parts.map((p) => p.index)).toEqual([0, 1]);
    expect(b.parts.map((p) => p.index)).toEqual([2]);
  });

  it('leaves a message on its route when no fallback is up, so the carrier waits for its bind', async () => {
    const [a, b] = [new FakeCarrier(), new FakeCarrier()];
    const out = await started(new RoutedDelivery({ routes: { a: { delivery: a, fallback: 'b' }, b: { delivery: b } }, default: 'a' }));
    a.connection(unbound('transceiver'));
    b.connection(unbound('transceiver'));
    expect(out.routes.at(-1)).toEqual({ route: 'b', state: 'down', reason: 'unbound', via: null });
    await out.routed.submit(part('254700000001'));
    expect(a.parts).toHaveLength(1);
  });
});

describe('RoutedDelivery: the adapter as a whole', () => {
  it('paces at the sum of its routes when each paces itself, and not at all when one does not', () => {
    expect(new RoutedDelivery({ routes: { a: { delivery: new FakeCarrier(50) }, b: { delivery: new FakeCarrier(30) } } }).submitsPerSecond).toBe(80);
    expect(new RoutedDelivery({ routes: { a: { delivery: new FakeCarrier(50) }, b: { delivery: new FakeCarrier() } } }).submitsPerSecond).toBeUndefined();
  });

  it('gives the longest receipt deadline of its routes when each has one, so a crash strands nothing on any of them, and none when one has none', () => {
    const withDeadline = (ms: number) => Object.assign(new FakeCarrier(), { receiptDeadlineMs: ms });
    expect(new RoutedDelivery({ routes: { a: { delivery: withDeadline(60_000) }, b: { delivery: withDeadline(90_000) } } }).receiptDeadlineMs).toBe(90_000);
    expect(new RoutedDelivery({ routes: { a: { delivery: withDeadline(60_000) }, b: { delivery: new FakeCarrier() } } }).receiptDeadlineMs).toBeUndefined();
  });

  it('starts again only the routes whose start failed, and closes them all', async () => {
    const a = new FakeCarrier();
    const b = new FakeCarrier();
    let fail = true;
    const start = b.start.bind(b);
    b.start = async (handlers) => {
      if (fail) throw new Error('smpp missing');
      await start(handlers);
    };
    let aStarts = 0;
    const startA = a.start.bind(a);
    a.start = async (handlers) => {
      aStarts++;
      await startA(handlers);
    };
    const routed = new RoutedDelivery({ routes: { a: { delivery: a }, b: { delivery: b } } });
    await expect(started(routed)).rejects.toThrow('smpp missing');
    fail = false;
    await started(routed);
    expect(aStarts).toBe(1);
    expect(b.handlers).not.toBeNull();
    await routed.close();
    expect([a.closed, b.closed]).toEqual([true, true]);
  });

  it('refuses a bad table at construction, naming the mistake', () => {
    const d = () => new FakeCarrier();
    expect(() => new RoutedDelivery({ routes: {} })).toThrow(/needs `routes`/);
    expect(() => new RoutedDelivery({ routes: { Safaricom: { delivery: d() } } })).toThrow(/route name "Safaricom"/);
    expect(() => new RoutedDelivery({ routes: { a: { delivery: d(), prefixes: ['+254'] } } })).toThrow(/prefix "\+254" must be 1 to 15 digits/);
    expect(() => new RoutedDelivery({ routes: { a: { delivery: d(), countries: ['ke'] } } })).toThrow(/country "ke" must be an ISO 3166 alpha-2 code/);
    expect(() => new RoutedDelivery({ routes: { a: { delivery: d(), countries: ['KE'] }, b: { delivery: d(), countries: ['KE'] } } })).toThrow(
      /country "KE" is in routes "a" and "b"/,
    );
    expect(() => new RoutedDelivery({ routes: { a: { delivery: d(), prefixes: ['254'] }, b: { delivery: d(), prefixes: ['254'] } } })).toThrow(
      /prefix "254" is in routes "a" and "b"/,
    );
    expect(() => new RoutedDelivery({ routes: { airtel: { delivery: d(), fallback: 'safaricon' }, safaricom: { delivery: d() } } })).toThrow(
      /fallback names no route: "safaricon"; did you mean "safaricom"/,
    );
    expect(() => new RoutedDelivery({ routes: { a: { delivery: d(), fallback: 'b' }, b: { delivery: d(), fallback: 'a' } } })).toThrow(/circle \(a -> b -> a\)/);
    expect(() => new RoutedDelivery({ routes: { a: { delivery: d() } }, default: 'b' })).toThrow(/option "default" names no route/);
    const shared = d();
    expect(() => new RoutedDelivery({ routes: { a: { delivery: shared }, b: { delivery: shared } } })).toThrow(/share one adapter/);
    expect(() => new RoutedDelivery({ routes: { a: { delivery: d(), prefix: ['254'] } as never } })).toThrow(/Did you mean `prefixes`/);
  });
});

describe('RoutedDelivery: events and metrics per route', () => {
  let close: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await close?.();
    close = null;
  });

  it("emits carrier.route and keeps route_up, route_down_total and each bind's gauge by route", async () => {
    const [a, b] = [new FakeCarrier(), new FakeCarrier()];
    const registry = new promClient.Registry();
    const gateway = createGateway({
      delivery: new RoutedDelivery({ routes: { a: { delivery: a, fallback: 'b' }, b: { delivery: b } }, default: 'a' }),
      metrics: { client: promClient as never, registry },
    });
    close = () => gateway.sms.close();
    const routes: RouteChange[] = [];
    const errors: { bind?: string; route?: string }[] = [];
    gateway.sms.on('carrier.route', (change) => routes.push(change));
    gateway.sms.on('error', (event) => errors.push(event));
    await gateway.sms.ready();
    const value = async (name: string, labels: Record<string, string>) => {
      const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
      const found = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
      return found?.value;
    };
    expect(await value('sms_outbox_route_up', { route: 'a' })).toBe(1);
    expect(await value('sms_outbox_route_down_total', { route: 'a', reason: 'unbound' })).toBe(0);
    a.connection(bound('transceiver', false));
    expect(await value('sms_outbox_carrier_bound', { route: 'a', bind: 'transceiver' })).toBe(1);
    a.connection(unbound('transceiver'));
    expect(routes.at(-1)).toEqual({ route: 'a', state: 'down', reason: 'unbound', via: 'b' });
    expect(errors.at(-1)).toMatchObject({ route: 'a', bind: 'transceiver' });
    expect(await value('sms_outbox_route_up', { route: 'a' })).toBe(0);
    expect(await value('sms_outbox_route_down_total', { route: 'a', reason: 'unbound' })).toBe(1);
    expect(await value('sms_outbox_carrier_bound', { route: 'a', bind: 'transceiver' })).toBe(0);
  });
});

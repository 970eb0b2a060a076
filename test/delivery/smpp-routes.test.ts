import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { RoutedDelivery, type CarrierRouteEvent, type MessageRecord } from '../../src/index.js';
import { SmppDelivery, smppRoutes } from '../../src/smpp.js';
import { startSmsc, type SmscEvent, type SmscHandle } from '../fixtures/smsc.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';

// Routes over real SMPP peers: test SMSCs in child processes on their own ports. Every
// SMSC issues the same carrier ids (they all count up from 0xA0000000), as two carriers
// may: the route qualifier keeps their receipts apart.

type Submit = Extract<SmscEvent, { event: 'submit' }>;
const submitsOf = (smsc: SmscHandle): Submit[] => smsc.events.filter((e): e is Submit => e.event === 'submit');
/** Waits for the SMSC's line of its `count`th submit: its answer may reach us before its line does. */
const seen = (smsc: SmscHandle, count: number) => eventually(() => submitsOf(smsc).length >= count, { what: `${count} submits at the SMSC` });

const smscs: SmscHandle[] = [];
let gateway: TestGateway | null = null;
afterEach(async () => {
  await gateway?.sms.close();
  gateway = null;
  await Promise.all(smscs.splice(0).map((smsc) => smsc.stop()));
});

async function peer(options: Parameters<typeof startSmsc>[0] = {}): Promise<SmscHandle> {
  const smsc = await startSmsc({ password: 'secret', ...options });
  smscs.push(smsc);
  await smsc.send({ cmd: 'set', receiptMode: 'auto' });
  return smsc;
}

const smpp = (smsc: SmscHandle, extra: Partial<ConstructorParameters<typeof SmppDelivery>[0]> = {}) =>
  new SmppDelivery({ url: `smpp://gw:secret@127.0.0.1:${smsc.port}`, reconnectMinMs: 50, reconnectMaxMs: 200, ...extra });

/** Sends one message per recipient; resolves with the refs in order. */
async function send(gw: TestGateway, recipients: readonly string[], message = 'Your code is 4821'): Promise<string[]> {
  const res = await request(gw.app)
    .post('/api/outbox/create')
    .set('X-API-Key', KEY)
    .send({ profile_code: '12345', messages: recipients.map((recipient) => ({ recipient, message })) });
  expect(res.status).toBe(200);
  return res.body.map((m: { message_ref: string }) => m.message_ref);
}

async function statusOf(gw: TestGateway, ref: string): Promise<string> {
  return (await request(gw.app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', KEY)).body.status;
}

async function allDelivered(gw: TestGateway, refs: readonly string[], timeoutMs = 15_000): Promise<void> {
  await eventually(async () => (await Promise.all(refs.map((ref) => statusOf(gw, ref)))).every((s) => s === 'delivered'), {
    timeoutMs,
    what: `${refs.length} messages delivered`,
  });
}

describe('RoutedDelivery over real SMPP peers', () => {
  it('sends each prefix to its own peer, the rest to the default, and every receipt finds its message though the peers issue the same ids', async () => {
    const [a, b, c] = await Promise.all([peer(), peer(), peer()]);
    gateway = createGateway({
      delivery: new RoutedDelivery({
        routes: {
          a: { delivery: smpp(a), prefixes: ['25470', '25471', '25472'] },
          b: { delivery: smpp(b), prefixes: ['25473', '25478'] },
          c: { delivery: smpp(c) },
        },
        default: 'c',
      }),
    });
    const recipients = ['254700000001', '254711000002', '254722000003', '254733000004', '254788000005', '254799000006', '255700000007'];
    const refs = await send(gateway, recipients);
    await allDelivered(gateway, refs);
    await Promise.all([seen(a, 3), seen(b, 2), seen(c, 2)]);
    expect(submitsOf(a).map((s) => s.destinationAddr)).toEqual(['254700000001', '254711000002', '254722000003']);
    expect(submitsOf(b).map((s) => s.destinationAddr)).toEqual(['254733000004', '254788000005']);
    expect(submitsOf(c).map((s) => s.destinationAddr)).toEqual(['254799000006', '255700000007']);
    // The three peers answered with overlapping ids, each part once.
    expect(submitsOf(a)[0]!.id).toBe(submitsOf(b)[0]!.id);
  });

  it('keeps a long message on one peer, every part', async () => {
    const [a, b] = await Promise.all([peer(), peer()]);
    gateway = createGateway({
      delivery: new RoutedDelivery({ routes: { a: { delivery: smpp(a), prefixes: ['25470'] }, b: { delivery: smpp(b), prefixes: ['2547'] } } }),
    });
    const refs = await send(gateway, ['254700000001', '254710000002'], 'G'.repeat(400));
    await allDelivered(gateway, refs);
    await Promise.all([seen(a, 3), seen(b, 3)]);
    expect(submitsOf(a).map((s) => [s.destinationAddr, s.udh?.slice(-4)])).toEqual([
      ['254700000001', '0301'],
      ['254700000001', '0302'],
      ['254700000001', '0303'],
    ]);
    expect(submitsOf(b).map((s) => s.destinationAddr)).toEqual(['254710000002', '254710000002', '254710000002']);
  });

  it('fails over when a peer is killed mid-run, loses no message, sends one twice only if its first send was never answered, and returns when the peer is back', async () => {
    const [a, b] = await Promise.all([peer(), peer()]);
    const routeEvents: CarrierRouteEvent[] = [];
    const carrierIds = new Map<string, string[]>();
    gateway = createGateway({
      delivery: new RoutedDelivery({
        routes: { a: { delivery: smpp(a, { waitTimeoutMs: 500 }), prefixes: ['2547'], fallback: 'b' }, b: { delivery: smpp(b), prefixes: ['2541'] } },
      }),
      worker: { pollIntervalMs: 20, retryBaseMs: 50, retryMaxMs: 200 },
    });
    gateway.sms.on('carrier.route', (event) => routeEvents.push(event));
    // The outage is reported on `error` too; heard here, it is not printed.
    const outage: unknown[] = [];
    gateway.sms.on('error', (event) => outage.push(event));
    gateway.sms.on('message.submitted', ({ message }: { message: MessageRecord }) =>
      carrierIds.set(message.ref, message.parts.map((p) => p.carrierId ?? '')),
    );
    await gateway.sms.ready();
    await eventually(() => a.events.some((e) => e.event === 'bind'), { what: 'route a bound' });

    // A steady stream of single messages, each to its own number; peer a is killed mid-run.
    const refs: string[] = [];
    const recipientOf = new Map<string, string>();
    let stream = 0;
    const sendNext = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const recipient = `2547${String(++stream).padStart(8, '0')}`;
        const [ref] = await send(gateway!, [recipient]);
        refs.push(ref!);
        recipientOf.set(ref!, recipient);
      }
    };
    const sending = sendNext(60);
    await eventually(() => submitsOf(a).length >= 15, { timeoutMs: 10_000, what: '15 submits at peer a' });
    // Peer a stops answering, then dies: what it took without answering is sent again.
    await a.send({ cmd: 'set', hold: true });
    const held = submitsOf(a).length + 2;
    await eventually(() => submitsOf(a).length >= held, { timeoutMs: 10_000, what: 'two submits held at peer a' });
    await a.stop();
    await sending;
    await eventually(() => routeEvents.some((e) => e.route === 'a' && e.state === 'down'), { what: 'route a down' });
    expect(routeEvents.find((e) => e.route === 'a' && e.state === 'down')).toEqual({ route: 'a', state: 'down', reason: 'unbound', via: 'b' });

    // Every message reached a carrier that answered for it.
    await eventually(async () => (await Promise.all(refs.map((ref) => statusOf(gateway!, ref)))).every((s) => s === 'submitted' || s === 'delivered'), {
      timeoutMs: 15_000,
      what: 'every message submitted',
    });
    const atA = submitsOf(a).map((s) => s.destinationAddr);
    const atB = submitsOf(b).map((s) => s.destinationAddr);
    expect(atB.length).toBeGreaterThan(0);
    expect(atA.filter((d) => atB.includes(d)).length).toBeGreaterThanOrEqual(2);
    for (const ref of refs) {
      const recipient = recipientOf.get(ref)!;
      const timesAtA = atA.filter((d) => d === recipient).length;
      const timesAtB = atB.filter((d) => d === recipient).length;
      const recorded = carrierIds.get(ref)![0]!;
      expect(timesAtA, recipient).toBeLessThanOrEqual(1);
      expect(timesAtB, recipient).toBeLessThanOrEqual(1);
      expect(timesAtA + timesAtB, recipient).toBeGreaterThanOrEqual(1);
      // Sent at both: peer a died before it answered, so the send recorded is b's.
      if (timesAtA === 1 && timesAtB === 1) expect(recorded, recipient).toMatch(/^b:/);
      if (timesAtB === 0) expect(recorded, recipient).toMatch(/^a:/);
    }

    // Peer a back on its port: it owes the receipts it accepted but never sent, and its route takes traffic again.
    const back = await startSmsc({ password: 'secret', port: a.port, firstId: 0xb0000000 });
    smscs.push(back);
    await back.send({ cmd: 'set', receiptMode: 'auto' });
    await eventually(() => routeEvents.at(-1)?.route === 'a' && routeEvents.at(-1)?.state === 'up', { timeoutMs: 10_000, what: 'route a up again' });
    for (const ref of refs) {
      if ((await statusOf(gateway, ref)) !== 'submitted') continue;
      const id = carrierIds.get(ref)![0]!;
      expect(id).toMatch(/^a:/);
      await back.send({ cmd: 'receipt', id: id.slice(2).toUpperCase(), stat: 'DELIVRD' });
    }
    await allDelivered(gateway, refs);
    const later = await send(gateway, ['254799999999']);
    await allDelivered(gateway, later);
    await seen(back, 1);
    expect(submitsOf(back).map((s) => s.destinationAddr)).toEqual(['254799999999']);
  });
});

describe('smppRoutes: routes written as one string (the demo\'s SMPP_ROUTES)', () => {
  it('builds one route per entry, named after its system_id, with * the default, each falling back to it when asked', async () => {
    const [a, c] = await Promise.all([peer(), peer()]);
    const routed = smppRoutes(`25470, 25471=smpp://Safaricom:secret@127.0.0.1:${a.port};*=smpp://agg:secret@127.0.0.1:${c.port}`, {
      fallbackToDefault: true,
      smpp: { reconnectMinMs: 50 },
    });
    expect(Object.keys(routed.routeStates())).toEqual(['safaricom', 'agg']);
    gateway = createGateway({ delivery: routed });
    gateway.sms.on('error', () => undefined);
    const refs = await send(gateway, ['254710000001', '254730000002']);
    await allDelivered(gateway, refs);
    await Promise.all([seen(a, 1), seen(c, 1)]);
    expect(submitsOf(a).map((s) => s.destinationAddr)).toEqual(['254710000001']);
    expect(submitsOf(c).map((s) => s.destinationAddr)).toEqual(['254730000002']);
    await a.stop();
    const states = await eventually(() => (routed.routeStates().safaricom!.state === 'down' ? routed.routeStates() : undefined));
    expect(states).toEqual({ safaricom: { state: 'down', reason: 'unbound', via: 'agg' }, agg: { state: 'up', via: 'agg' } });
  });

  it('refuses a malformed table, naming the entry', () => {
    expect(() => smppRoutes('')).toThrow(/no entry/);
    expect(() => smppRoutes('smpp://a@h')).toThrow(/entry 1 has no "prefixes=url" form/);
    expect(() => smppRoutes('254=smpp://a@h;*=http://b@h')).toThrow(/scheme "http:"/);
    expect(() => smppRoutes('*=smpp://a@h;*=smpp://b@h')).toThrow(/"\*" is given twice/);
    expect(() => smppRoutes('25a=smpp://a@h')).toThrow(/prefix "25a" must be 1 to 15 digits/);
  });
});

describe('SmppDelivery with several binds', () => {
  it('spreads submits over every bind, and a receipt on any bind finds its message', async () => {
    const smsc = await peer();
    await smsc.send({ cmd: 'set', spreadDeliveries: true });
    gateway = createGateway({ delivery: smpp(smsc, { binds: 3 }) });
    // Bound as the adapter sees it (its bind_resp read), not only as the SMSC does: a bind
    // still opening takes no submit, and 30 quick ones could all go to the other two.
    let bound = 0;
    gateway.sms.on('carrier.connection', (change) => void (change.state === 'bound' && bound++));
    await gateway.sms.ready();
    await eventually(() => bound >= 3 && smsc.events.filter((e) => e.event === 'bind').length === 3, { what: 'three binds' });
    const refs = await send(gateway, Array.from({ length: 30 }, (_, i) => `2547000000${String(i).padStart(2, '0')}`));
    await allDelivered(gateway, refs);
    await seen(smsc, 30);
    const sessions = (list: { session: number }[]) => new Set(list.map((e) => e.session));
    expect(sessions(submitsOf(smsc)).size).toBe(3);
    const answers = () => smsc.events.filter((e): e is Extract<SmscEvent, { event: 'deliver_resp' }> => e.event === 'deliver_resp');
    // Each receipt is answered once recorded: its answer's line follows the delivered state.
    const answered = await eventually(() => (answers().length >= 30 ? answers() : undefined), { what: '30 receipts answered' });
    expect(answered.every((e) => e.status === 0)).toBe(true);
    expect(sessions(answered).size).toBe(3);
  });

  it('paces all its binds together at tps: the account\'s rate, not each bind\'s', async () => {
    const smsc = await peer();
    const delivery = smpp(smsc, { binds: 3, tps: 50 });
    await delivery.start({ receipt: async () => undefined, inbound: async () => undefined, error: () => undefined });
    await delivery.waitForBind(5_000);
    const parts = Array.from({ length: 51 }, (_, i) => ({
      ref: `r${i}`, principalId: 'p', profileCode: '1', sender: 'PACED', recipient: `2547${String(i).padStart(8, '0')}`,
      text: 'x', partText: 'x', index: 0, count: 1, concatRef: 1, encoding: 'GSM-7' as const, messageType: 1, reqType: 1,
    }));
    await Promise.all(parts.map((p) => delivery.submit(p)));
    await delivery.close();
    await seen(smsc, 51);
    const times = submitsOf(smsc).map((s) => s.at).sort((x, y) => x - y);
    const perSecond = ((times.length - 1) / (times.at(-1)! - times[0]!)) * 1000;
    expect(perSecond).toBeGreaterThan(45);
    expect(perSecond).toBeLessThan(55);
    expect(new Set(submitsOf(smsc).map((s) => s.session)).size).toBe(3);
  });

  it('binds n transmitters and one receiver in separate mode, the receiver taking every receipt', async () => {
    const smsc = await peer();
    const connections: string[] = [];
    gateway = createGateway({ delivery: smpp(smsc, { binds: 2, bindMode: 'separate' }) });
    gateway.sms.on('carrier.connection', (change) => connections.push(`${change.bind} ${change.state}`));
    await gateway.sms.ready();
    await eventually(() => connections.length === 3, { what: 'three binds' });
    expect(connections.sort()).toEqual(['receiver bound', 'transmitter.1 bound', 'transmitter.2 bound']);
    const refs = await send(gateway, Array.from({ length: 10 }, (_, i) => `2547100000${String(i).padStart(2, '0')}`));
    await allDelivered(gateway, refs);
    const modes = smsc.events.filter((e): e is Extract<SmscEvent, { event: 'bind' }> => e.event === 'bind').map((e) => e.mode);
    expect(modes.sort()).toEqual(['receiver', 'transmitter', 'transmitter']);
  });
});

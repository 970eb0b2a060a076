/**
 * The demo with SMPP_ROUTES, as docs/demo.md says to run it: two SMSCs, one for a network's
 * prefixes and one for the rest; each message reaches its own.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo, stopDemo, type RunningDemo } from '../helpers/demo.js';
import { eventually } from '../helpers/poll.js';
import { startSmsc, type SmscEvent, type SmscHandle } from '../fixtures/smsc.js';

const KEY = 'demo-routes-key';
let dir: string;
let demo: RunningDemo;
let origin: string;
let network: SmscHandle;
let aggregator: SmscHandle;

beforeAll(async () => {
  [network, aggregator] = await Promise.all([startSmsc({ password: 'pw' }), startSmsc({ password: 'pw' })]);
  await Promise.all([network.send({ cmd: 'set', receiptMode: 'auto' }), aggregator.send({ cmd: 'set', receiptMode: 'auto' })]);
  dir = await mkdtemp(join(tmpdir(), 'sms-outbox-demo-routes-'));
  demo = startDemo({
    SMS_DB: join(dir, 'demo.db'),
    SMS_API_KEY: KEY,
    SMPP_ROUTES: `25470,25471=smpp://net:pw@127.0.0.1:${network.port};*=smpp://agg:pw@127.0.0.1:${aggregator.port}`,
  });
  origin = await demo.origin;
});

afterAll(async () => {
  if (demo) await stopDemo(demo.child);
  await Promise.all([network?.stop(), aggregator?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

type Submit = Extract<SmscEvent, { event: 'submit' }>;
const destinations = (smsc: SmscHandle) => smsc.events.filter((e): e is Submit => e.event === 'submit').map((e) => e.destinationAddr);

describe('the demo with SMPP_ROUTES', () => {
  it("sends a network's prefixes to its SMSC and every other number to the * route, each message delivered", async () => {
    const res = await fetch(`${origin}/api/outbox/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ profile_code: '12345', messages: [{ recipient: '254710000001', message: 'Hi' }, { recipient: '254730000002', message: 'Hi' }] }),
    });
    expect(res.status).toBe(200);
    const refs = ((await res.json()) as { message_ref: string }[]).map((m) => m.message_ref);
    await eventually(
      async () => {
        const states = await Promise.all(
          refs.map(async (ref) => ((await (await fetch(`${origin}/api/outbox/delivery-status/${ref}`, { headers: { 'x-api-key': KEY } })).json()) as { status: string }).status),
        );
        return states.every((state) => state === 'delivered');
      },
      { timeoutMs: 15_000, what: 'both messages delivered' },
    );
    await eventually(() => destinations(network).length + destinations(aggregator).length >= 2, { what: 'both submits seen' });
    expect(destinations(network)).toEqual(['254710000001']);
    expect(destinations(aggregator)).toEqual(['254730000002']);
  });
});

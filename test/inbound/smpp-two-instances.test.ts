/**
 * Long MO messages with two instances: two routers on one PostgreSQL schema, each with its
 * own bind to a real SMPP peer (test/fixtures/smsc.ts) that spreads its `deliver_sm` over the
 * binds in turn, so the parts of each long MO reach both instances. Every message reaches
 * the customer once and whole, every part answered ESME_ROK once stored.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSmsRouter, staticKeys, type SmsRouter } from '../../src/index.js';
import { PostgresStorage } from '../../src/postgres.js';
import { SmppDelivery } from '../../src/smpp.js';
import { startSmsc, type SmscEvent, type SmscHandle } from '../fixtures/smsc.js';
import { makePool, postgresUnavailable } from '../helpers/services.js';
import { eventually } from '../helpers/poll.js';
import { startReceiver, type Receiver } from './receiver.js';

const SHORT_CODE = '22141';
const pool = makePool(8);
const pgUnavailable = await postgresUnavailable(pool);
if (pgUnavailable !== null) console.warn(`skipping the two-instance MO test: ${pgUnavailable}`);
const schema = `t_${randomBytes(6).toString('hex')}`;

let smsc: SmscHandle;
let receiver: Receiver;
const running: SmsRouter[] = [];

beforeAll(async () => {
  smsc = await startSmsc({ password: 'secret' });
  await smsc.send({ cmd: 'set', spreadDeliveries: true });
});
afterEach(async () => {
  for (const sms of running.splice(0)) await sms.close();
  await receiver?.close();
});
afterAll(async () => {
  await smsc?.stop();
  if (pgUnavailable === null) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
});

/** One instance: its own bind to the peer, the shared schema, the customer's receiver. */
async function instance(): Promise<SmsRouter> {
  const sms = createSmsRouter({
    verifyKey: staticKeys([{ key: `key-${running.length}`, id: 'acme', profiles: [SHORT_CODE], inboundUrl: receiver.url }]),
    delivery: new SmppDelivery({ url: `smpp://inbound:secret@127.0.0.1:${smsc.port}` }),
    storage: new PostgresStorage({ pool, schema }),
    worker: { pollIntervalMs: 20 },
    dlr: { allowPrivateAddresses: true, schedule: [0, 50, 50], pollIntervalMs: 20 },
  });
  running.push(sms);
  await sms.ready();
  return sms;
}

type DeliverResp = Extract<SmscEvent, { event: 'deliver_resp' }>;

/** Sends one part; resolves with its answer (status and the session it came on). */
async function part(from: string, text: string, udh: string): Promise<DeliverResp> {
  const tag = randomBytes(4).toString('hex');
  const since = smsc.events.length;
  await smsc.send({ cmd: 'mo', tag, from, to: SHORT_CODE, text, udh });
  return (await smsc.waitFor((e) => e.event === 'deliver_resp' && e.tag === tag, 20_000, since)) as DeliverResp;
}

describe.skipIf(pgUnavailable !== null)('long MO messages with two instances', () => {
  it('a message whose parts come on the binds of different instances reaches the customer once, whole', async () => {
    receiver = await startReceiver();
    const binds = smsc.events.length;
    await instance();
    await instance();
    await eventually(() => smsc.events.slice(binds).filter((e) => e.event === 'bind' && e.ok).length >= 2, { what: 'both instances bound' });

    const messages = Array.from({ length: 6 }, (_, i) => ({
      from: `25470000${String(4000 + i)}`,
      ref: (0x40 + i).toString(16).padStart(2, '0'),
      parts: [`mo-${i}#A `, `mo-${i}#B `, `mo-${i}#C`],
    }));
    // The parts go out in order, each on the next bind, so each message's parts reach both instances.
    const answers = await Promise.all(
      messages.map((message) =>
        Promise.all(message.parts.map((text, i) => part(message.from, text, `0003${message.ref}03${String(i + 1).padStart(2, '0')}`))),
      ),
    );
    // Every part answered ESME_ROK, and the parts of each message did come on both binds.
    expect(answers.flat().map((a) => a.status)).toEqual(Array(18).fill(0));
    for (const a of answers) expect(new Set(a.map((r) => r.session)).size).toBe(2);

    await eventually(() => receiver.received.length >= messages.length, { what: 'a webhook per message' });
    const texts = receiver.received.map((r) => (JSON.parse(r.body) as { data: { from: string; message: string } }).data);
    expect(texts.map((d) => `${d.from} ${d.message}`).sort()).toEqual(
      messages.map((m) => `${m.from} ${m.parts.join('')}`).sort(),
    );
    // No fragment follows later (a wait that forwarded parts on their own).
    const stored = await new PostgresStorage({ pool, schema }).listInbound({ limit: 100 });
    expect(stored.map((r) => r.text).sort()).toEqual(messages.map((m) => m.parts.join('')).sort());
  });
});

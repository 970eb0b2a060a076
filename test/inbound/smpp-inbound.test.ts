/**
 * The premium MO flow end to end with a real SMPP peer (test/fixtures/smsc.ts): MO
 * `deliver_sm` forwarded to the customer as signed, retried webhooks, answered only once
 * stored; STOP keeping `submit_sm` for that number from ever reaching the SMSC, START
 * restoring it; a long MO in UDH or SAR parts arriving as one message; and the opt-out list
 * surviving a restart on SQLite and PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import express from 'express';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSmsRouter, staticKeys, type SmsRouter, type Storage } from '../../src/index.js';
import { SqliteStorage } from '../../src/sqlite.js';
import { PostgresStorage } from '../../src/postgres.js';
import { SmppDelivery } from '../../src/smpp.js';
import { startSmsc, type SmscEvent, type SmscHandle } from '../fixtures/smsc.js';
import { makePool, postgresUnavailable } from '../helpers/services.js';
import { eventually } from '../helpers/poll.js';
import { startReceiver, type Receiver } from './receiver.js';

const KEY = 'smpp-inbound-key';
const SECRET = `whsec_${Buffer.from('smpp inbound secret, 32 bytes!!!').toString('base64')}`;
const SHORT_CODE = '22141';

let smsc: SmscHandle;
const pool = makePool(4);
const pgUnavailable = await postgresUnavailable(pool);
const dir = mkdtempSync(join(tmpdir(), 'sms-inbound-'));
const running: SmsRouter[] = [];
let receiver: Receiver;

beforeAll(async () => {
  smsc = await startSmsc({ password: 'secret' });
});
afterAll(async () => {
  await smsc?.stop();
  await pool.end();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  await smsc.send({ cmd: 'set', receiptMode: 'auto', hold: false });
});
afterEach(async () => {
  for (const sms of running.splice(0)) await sms.close();
  await receiver?.close();
});

/** A gateway on `storage` bound to the fixture SMSC, forwarding its short code's MO to `receiver`. */
async function gateway(storage?: Storage) {
  const sms = createSmsRouter({
    verifyKey: staticKeys([{ key: KEY, id: 'acme', profiles: [SHORT_CODE], inboundUrl: receiver.url, callbackSecret: SECRET }]),
    delivery: new SmppDelivery({ url: `smpp://inbound:secret@127.0.0.1:${smsc.port}` }),
    ...(storage === undefined ? {} : { storage }),
    worker: { pollIntervalMs: 20 },
    dlr: { allowPrivateAddresses: true, schedule: [0, 50, 50], pollIntervalMs: 20 },
  });
  running.push(sms);
  await sms.ready();
  const bound = smsc.events.length;
  await smsc.waitFor((e) => e.event === 'bind', 5_000, Math.max(0, bound - 1)).catch(() => undefined);
  return { sms, app: express().use(sms) };
}

/** Sends one premium message to `to` and waits for its final state. */
async function premiumTo(app: express.Express, to: string): Promise<{ status: string; status_reason: string | null }> {
  const res = await request(app).post('/api/outbox/premium').set('X-API-Key', KEY)
    .send({ profile_code: SHORT_CODE, messages: [{ mobile_number: to, message: 'Todays premium tip' }] });
  expect(res.status).toBe(200);
  const ref = (res.body as { message_ref: string }[])[0]!.message_ref;
  return eventually(
    async () => {
      const status = (await request(app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', KEY)).body as { status: string; status_reason: string | null };
      return status.status === 'queued' || status.status === 'submitted' ? undefined : status;
    },
    { what: `the final state of the message to ${to}` },
  );
}

const submitsTo = (number: string, from = 0) =>
  smsc.events.slice(from).filter((e): e is Extract<SmscEvent, { event: 'submit' }> => e.event === 'submit' && e.destinationAddr === number);

/** Sends an MO and waits for the SMSC to see its answer; returns the answer's status. */
async function mo(command: Omit<Extract<Parameters<SmscHandle['send']>[0], { cmd: 'mo' }>, 'cmd' | 'tag'>): Promise<number> {
  const tag = randomBytes(4).toString('hex');
  const from = smsc.events.length;
  await smsc.send({ cmd: 'mo', tag, ...command });
  const answer = await smsc.waitFor((e) => e.event === 'deliver_resp' && e.tag === tag, 15_000, from);
  return (answer as { status: number }).status;
}

describe('premium MO over SMPP', () => {
  it('forwards an MO to the inbound URL, signed, retried after a failure, and answers the SMSC once stored', async () => {
    receiver = await startReceiver([503, 204]);
    const { sms } = await gateway();
    const sent = new Promise<number>((resolve) => sms.once('inbound.sent', (e) => resolve(e.attempt)));
    expect(await mo({ from: '254700000111', to: SHORT_CODE, text: 'What is on today?' })).toBe(0);
    expect(await sent).toBe(2);
    expect(receiver.received.map((r) => r.status)).toEqual([503, 204]);
    const last = receiver.received[1]!;
    const payload = new Webhook(SECRET).verify(last.body, last.headers as Record<string, string>);
    expect(payload).toMatchObject({
      event_type: 'sms_inbound',
      data: { from: '254700000111', to: SHORT_CODE, message: 'What is on today?', profile_code: SHORT_CODE },
    });
  });

  it('after STOP a premium send ends rejected/opted_out with no submit_sm for the number; START restores it', async () => {
    receiver = await startReceiver();
    const { app } = await gateway();
    const number = '254700000222';
    const from = smsc.events.length;
    expect(await mo({ from: number, to: SHORT_CODE, text: 'STOP' })).toBe(0);
    expect(await premiumTo(app, number)).toMatchObject({ status: 'rejected', status_reason: 'opted_out' });
    // Another number still goes out, so the SMSC did see traffic from this gateway meanwhile.
    expect(await premiumTo(app, '254700000223')).toMatchObject({ status: 'delivered' });
    expect(submitsTo(number, from)).toEqual([]);
    expect(await mo({ from: number, to: SHORT_CODE, text: 'start' })).toBe(0);
    expect(await premiumTo(app, number)).toMatchObject({ status: 'delivered' });
    expect(submitsTo(number, from)).toHaveLength(1);
  });

  it('a long MO in UDH parts, or in SAR parts, arrives as one message, and each part is answered', async () => {
    receiver = await startReceiver();
    const { sms } = await gateway();
    const inbound: string[] = [];
    sms.on('message.inbound', (m) => inbound.push(m.text));
    const parts = await Promise.all([
      mo({ from: '254700000333', to: SHORT_CODE, text: 'world, in two parts', udh: '0003a70202' }),
      mo({ from: '254700000333', to: SHORT_CODE, text: 'Hello ', udh: '0003a70201' }),
    ]);
    expect(parts).toEqual([0, 0]);
    const sar = await Promise.all([
      mo({ from: '254700000334', to: SHORT_CODE, text: 'SAR ', sar: { ref: 300, total: 2, seq: 1 } }),
      mo({ from: '254700000334', to: SHORT_CODE, text: 'joined', sar: { ref: 300, total: 2, seq: 2 } }),
    ]);
    expect(sar).toEqual([0, 0]);
    expect(inbound).toEqual(['Hello world, in two parts', 'SAR joined']);
    await eventually(() => receiver.received.length === 2, { what: 'two webhooks' });
    expect(receiver.received.map((r) => (JSON.parse(r.body) as { data: { message: string } }).data.message).sort()).toEqual([
      'Hello world, in two parts',
      'SAR joined',
    ]);
  });

  const restart = async (storage: () => Storage) => {
    receiver = await startReceiver();
    const number = `2547${randomBytes(4).readUInt32BE(0) % 100_000_000}`.padEnd(12, '0');
    const first = await gateway(storage());
    expect(await mo({ from: number, to: SHORT_CODE, text: 'Stop' })).toBe(0);
    await first.sms.close();
    running.splice(running.indexOf(first.sms), 1);
    const second = await gateway(storage());
    expect(await second.sms.optOuts.has(SHORT_CODE, number)).toBe(true);
    expect(await premiumTo(second.app, number)).toMatchObject({ status: 'rejected', status_reason: 'opted_out' });
  };

  it('a restart keeps the opt-out list (SQLite)', async () => {
    const path = join(dir, 'restart.db');
    await restart(() => new SqliteStorage({ path }));
  });

  it.skipIf(pgUnavailable !== null)('a restart keeps the opt-out list (PostgreSQL)', async () => {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    try {
      await restart(() => new PostgresStorage({ pool, schema }));
    } finally {
      for (const sms of running.splice(0)) await sms.close();
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});

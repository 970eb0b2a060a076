import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  DeliveryError,
  MemoryStorage,
  outcome,
  staticProfiles,
  type CreditChargedEvent,
  type CreditHook,
  type CreditRefundedEvent,
  type CreditRequest,
  type SmsRouterOptions,
  type Storage,
} from '../../src/index.js';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';
import { ScriptedDelivery } from '../helpers/scripted-delivery.js';
import { eventually } from '../helpers/poll.js';
import { makePool, postgresUnavailable } from '../helpers/services.js';

const admin = makePool(2);
const unreachable = await postgresUnavailable(admin);
afterAll(() => admin.end());

const gateways: TestGateway[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.sms.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function start(options: Partial<SmsRouterOptions> = {}): TestGateway {
  const gateway = createGateway({ rateLimit: false, ...options });
  gateway.sms.on('error', () => undefined);
  gateways.push(gateway);
  return gateway;
}

/** A request of one message per text, under external id `externalId`. */
function body(texts: readonly string[], externalId = 'bill-1', profile = '12345') {
  return { profile_code: profile, messages: texts.map((message) => ({ recipient: '254712345678', message, external_id: externalId })) };
}

function send(app: TestGateway['app'], payload: unknown, idempotencyKey?: string) {
  const req = request(app).post('/api/outbox/create').set('X-API-Key', KEY).set('Content-Type', 'application/json');
  if (idempotencyKey !== undefined) req.set('Idempotency-Key', idempotencyKey);
  return req.send(JSON.stringify(payload));
}

async function storedCount(app: TestGateway['app'], externalId: string): Promise<number> {
  const res = await request(app).get(`/api/outbox/delivery-status?external_id=${externalId}`).set('X-API-Key', KEY);
  return res.status === 404 ? 0 : (res.body as unknown[]).length;
}

/** 160 one-septet characters: one SMS as GSM-7. */
const ONE_SMS = 'x'.repeat(160);
/** 200 characters: two SMS as GSM-7. */
const TWO_SMS = 'y'.repeat(200);

describe('credit kept by the storage (credit: { ledger: "storage" })', () => {
  it('answers 402 INSUFFICIENT_CREDIT when the balance is short, and stores, charges and announces nothing', async () => {
    const { app, sms } = start({ credit: { ledger: 'storage' }, delivery: new ScriptedDelivery() });
    await sms.credit!.topUp('acme', 2);
    const accepted: string[] = [];
    sms.on('message.accepted', ({ message }) => accepted.push(message.ref));
    sms.on('credit.charged', () => accepted.push('charged'));
    const res = await send(app, body([ONE_SMS, TWO_SMS], 'short-1'));
    expect(res.status).toBe(402);
    expect(res.body).toEqual({ details: 'Insufficient credit: the request needs 3 SMS units, the balance is 2', code: 'INSUFFICIENT_CREDIT' });
    expect(await storedCount(app, 'short-1')).toBe(0);
    expect(await sms.credit!.balance('acme')).toBe(2);
    expect(accepted).toEqual([]);
  });

  it('takes the units of the answer\'s sms_count and announces the charge; a replayed Idempotency-Key takes nothing', async () => {
    const { app, sms } = start({ credit: { ledger: 'storage' }, delivery: new ScriptedDelivery() });
    await sms.credit!.topUp('acme', 10);
    const charged: CreditChargedEvent[] = [];
    sms.on('credit.charged', (event) => charged.push(event));
    const res = await send(app, body([ONE_SMS, TWO_SMS], 'paid-1'), 'order-1').expect(200);
    const refs = (res.body as { message_ref: string; sms_count: number }[]).map((item) => ({ ref: item.message_ref, units: item.sms_count }));
    expect(refs.map((line) => line.units)).toEqual([1, 2]);
    expect(await sms.credit!.balance('acme')).toBe(7);
    expect(charged).toEqual([{ principalId: 'acme', profileCode: '12345', units: 3, messages: refs }]);
    const replay = await send(app, body([ONE_SMS, TWO_SMS], 'paid-1'), 'order-1').expect(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(await sms.credit!.balance('acme')).toBe(7);
    expect(charged).toHaveLength(1);
  });

  it('gives the units back when the carrier\'s route refuses the message at submission', async () => {
    const delivery = new ScriptedDelivery();
    delivery.beforeSubmit = () => {
      throw new DeliveryError('no route to this network', { permanent: true, outcome: outcome('rejected', 'rejected', 'No route') });
    };
    const { app, sms } = start({ credit: { ledger: 'storage' }, delivery });
    await sms.credit!.topUp('acme', 5);
    const refunded: CreditRefundedEvent[] = [];
    sms.on('credit.refunded', (event) => refunded.push(event));
    const charged = new Promise<number>((resolve) => sms.on('credit.charged', ({ units }) => resolve(units)));
    const res = await send(app, body([TWO_SMS], 'refused-1')).expect(200);
    expect(await charged).toBe(2);
    await eventually(async () => expect(await sms.credit!.balance('acme')).toBe(5));
    const ref = (res.body as { message_ref: string }[])[0]!.message_ref;
    await eventually(() => expect(refunded).toEqual([{ principalId: 'acme', units: 2, messages: [{ ref, units: 2 }], cause: 'unsent' }]));
    const status = await request(app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', KEY);
    expect(status.body).toMatchObject({ status: 'rejected' });
  });

  it('keeps the units of a delivered message', async () => {
    const delivery = new ScriptedDelivery();
    const { app, sms } = start({ credit: { ledger: 'storage' }, delivery });
    await sms.credit!.topUp('acme', 5);
    const delivered = new Promise<void>((resolve) => sms.on('message.status', ({ message }) => message.state === 'delivered' && resolve()));
    await send(app, body([ONE_SMS], 'kept-1')).expect(200);
    await eventually(() => expect(delivery.submitted).toHaveLength(1));
    await delivery.receipt({ carrierId: delivery.submitted[0]!.carrierId, outcome: outcome('delivered', 'delivered_to_terminal') });
    await delivered;
    expect(await sms.credit!.balance('acme')).toBe(4);
  });

  it('refuses a bad top-up with a TypeError', async () => {
    const { sms } = start({ credit: { ledger: 'storage' } });
    await expect(sms.credit!.topUp('acme', 0)).rejects.toThrow(TypeError);
    await expect(sms.credit!.topUp('acme', 1.5)).rejects.toThrow(TypeError);
    await expect(sms.credit!.topUp('', 1)).rejects.toThrow(TypeError);
    expect(await sms.credit!.balance('acme')).toBe(0);
  });

  it('is checked at construction: a storage without a ledger, an unknown policy, a typo', () => {
    const bare: Storage = Object.assign(new MemoryStorage(), { topUpCredit: undefined, creditBalance: undefined });
    expect(() => createGateway({ storage: bare, credit: { ledger: 'storage' } })).toThrow(/no credit ledger/);
    expect(() => createGateway({ credit: { ledger: 'storage', refunds: 'all' as never } })).toThrow(/refunds must be/);
    expect(() => createGateway({ credit: { ledger: 'storage', refund: 'unsent' } as never })).toThrow(/refunds/);
    expect(() => createGateway({ credit: { ledger: {} as never } })).toThrow(/charge\(\) and refund\(\)/);
  });
});

describe('credit kept by the host (credit: { ledger: hook })', () => {
  /** A hook over a map of balances, recording its calls. */
  function hostLedger(balance: number) {
    const calls: { charge: CreditRequest[]; refund: unknown[] } = { charge: [], refund: [] };
    const hook: CreditHook = {
      charge: (req) => {
        calls.charge.push(req);
        if (req.units > balance) return false;
        balance -= req.units;
        return true;
      },
      refund: async (refund) => {
        calls.refund.push(refund);
        balance += refund.units;
      },
    };
    return { hook, calls, balance: () => balance };
  }

  it('asks the hook with the units per message and in total; its refusal is a 402 with nothing stored', async () => {
    const host = hostLedger(2);
    const { app } = start({ credit: { ledger: host.hook }, delivery: new ScriptedDelivery() });
    const res = await send(app, body([ONE_SMS, TWO_SMS], 'hook-1'));
    expect(res.status).toBe(402);
    expect(res.body).toEqual({ details: 'Insufficient credit: the request needs 3 SMS units', code: 'INSUFFICIENT_CREDIT' });
    expect(host.calls.charge).toEqual([
      { principalId: 'acme', profileCode: '12345', units: 3, messages: [{ ref: expect.any(String), units: 1 }, { ref: expect.any(String), units: 2 }] },
    ]);
    expect(await storedCount(app, 'hook-1')).toBe(0);
    await send(app, body([TWO_SMS], 'hook-2')).expect(200);
    expect(host.balance()).toBe(0);
  });

  it('gives the units back through the hook when the messages cannot be stored', async () => {
    const host = hostLedger(5);
    const storage = Object.assign(new MemoryStorage(), { insertMessages: () => Promise.reject(new Error('disk full')) });
    const { app } = start({ credit: { ledger: host.hook }, storage });
    await send(app, body([TWO_SMS], 'lost-1')).expect(500);
    await eventually(() => expect(host.calls.refund).toEqual([{ principalId: 'acme', units: 2, messages: [{ ref: host.calls.charge[0]!.messages[0]!.ref, units: 2 }], cause: 'not-stored' }]));
    expect(host.balance()).toBe(5);
  });

  it('gives the units of a message refused by the carrier\'s route back through the hook, once', async () => {
    const host = hostLedger(5);
    const delivery = new ScriptedDelivery();
    delivery.beforeSubmit = () => {
      throw new DeliveryError('no route', { permanent: true, outcome: outcome('rejected', 'rejected') });
    };
    const { app } = start({ credit: { ledger: host.hook }, delivery });
    await send(app, body([ONE_SMS], 'hook-refused')).expect(200);
    await eventually(() => expect(host.calls.refund).toHaveLength(1));
    expect(host.calls.refund[0]).toMatchObject({ units: 1, cause: 'unsent' });
    expect(host.balance()).toBe(5);
  });

  it('refunds undelivered messages under refunds: "unsent-and-failed" only', async () => {
    for (const refunds of ['unsent', 'unsent-and-failed'] as const) {
      const host = hostLedger(5);
      const delivery = new ScriptedDelivery();
      const { app, sms } = start({ credit: { ledger: host.hook, refunds }, delivery });
      const ended = new Promise<void>((resolve) => sms.on('message.status', ({ message }) => message.state === 'undelivered' && resolve()));
      await send(app, body([ONE_SMS], `failed-${refunds}`)).expect(200);
      await eventually(() => expect(delivery.submitted).toHaveLength(1));
      await delivery.receipt({ carrierId: delivery.submitted[0]!.carrierId, outcome: outcome('undelivered', 'absent_subscriber') });
      await ended;
      if (refunds === 'unsent') expect(host.calls.refund).toEqual([]);
      else await eventually(() => expect(host.calls.refund).toEqual([expect.objectContaining({ units: 1, cause: 'failed' })]));
    }
  });
});

describe('smart encoding (Profile.smartEncoding)', () => {
  const profiles = staticProfiles([
    { code: 'SMART', owners: ['acme'], smartEncoding: true },
    { code: 'PLAIN', owners: ['acme'] },
  ]);
  /** 160 characters with one curly apostrophe: 3 SMS as UCS-2, 1 as GSM-7 once replaced. */
  const CURLY = `It\u2019s ${'z'.repeat(155)}`;

  it('sends, stores and counts the replaced text on a smart profile, and the text as given on another', async () => {
    const { app, sms } = start({ resolveProfile: profiles, delivery: new ScriptedDelivery() });
    const accepted: { text: string; smsCount: number; encoding: string }[] = [];
    sms.on('message.accepted', ({ message }) => accepted.push({ text: message.text, smsCount: message.smsCount, encoding: message.encoding }));
    const smart = await send(app, body([CURLY], 'smart-1', 'SMART')).expect(200);
    const plain = await send(app, body([CURLY], 'plain-1', 'PLAIN')).expect(200);
    expect((smart.body as { sms_count: number }[])[0]!.sms_count).toBe(1);
    expect((plain.body as { sms_count: number }[])[0]!.sms_count).toBe(3);
    expect(accepted).toEqual([
      { text: `It's ${'z'.repeat(155)}`, smsCount: 1, encoding: 'GSM-7' },
      { text: CURLY, smsCount: 3, encoding: 'UCS-2' },
    ]);
  });

  it('charges the credit the count of what is sent', async () => {
    const { app, sms } = start({ resolveProfile: profiles, credit: { ledger: 'storage' }, delivery: new ScriptedDelivery() });
    await sms.credit!.topUp('acme', 1);
    await send(app, body([CURLY], 'smart-2', 'SMART')).expect(200);
    expect(await sms.credit!.balance('acme')).toBe(0);
  });

  it('refuses a profile whose smartEncoding is not a boolean', () => {
    expect(() => staticProfiles([{ code: 'X', owners: ['a'], smartEncoding: 'yes' as never }])).toThrow(/smartEncoding must be true or false/);
  });
});

describe('no overspend under a burst of concurrent requests', () => {
  /** Sends `count` one-unit requests at once to `apps` in turn; returns the statuses. */
  async function burst(apps: readonly TestGateway['app'][], count: number): Promise<number[]> {
    const answers = await Promise.all(Array.from({ length: count }, (_, i) => send(apps[i % apps.length]!, body([ONE_SMS], `burst-${i}`))));
    return answers.map((res) => res.status);
  }

  it('on SQLite: exactly the balance is spent, every other request is a 402', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sms-credit-'));
    dirs.push(dir);
    const { app, sms } = start({ storage: new SqliteStorage({ path: join(dir, 'outbox.db') }), credit: { ledger: 'storage' }, delivery: new ScriptedDelivery() });
    await sms.credit!.topUp('acme', 25);
    const statuses = await burst([app], 60);
    expect(statuses.filter((s) => s === 200)).toHaveLength(25);
    expect(statuses.filter((s) => s === 402)).toHaveLength(35);
    expect(await sms.credit!.balance('acme')).toBe(0);
  });

  it.skipIf(unreachable !== null)('on PostgreSQL, two instances on one schema: exactly the balance is spent', async () => {
    const schema = `t_credit_${randomBytes(5).toString('hex')}`;
    const pools = [makePool(6), makePool(6)];
    try {
      const [one, two] = pools.map((pool) =>
        start({ storage: new PostgresStorage({ pool, schema }), credit: { ledger: 'storage' }, delivery: new ScriptedDelivery() }),
      );
      await one!.sms.ready();
      await two!.sms.ready();
      await one!.sms.credit!.topUp('acme', 40);
      const statuses = await burst([one!.app, two!.app], 100);
      expect(statuses.filter((s) => s === 200)).toHaveLength(40);
      expect(statuses.filter((s) => s === 402)).toHaveLength(60);
      expect(await two!.sms.credit!.balance('acme')).toBe(0);
      const { rows } = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".ledger_messages`);
      expect(rows[0]!.n).toBe(40);
    } finally {
      for (const gateway of gateways.splice(0)) await gateway.sms.close();
      await Promise.all(pools.map((pool) => pool.end()));
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});

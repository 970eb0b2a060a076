/**
 * A receipt that overtakes the recording of its own submission, through the router with
 * `SmppDelivery` against a real SMSC (the `smpp` package's server, in a child process, in
 * auto receipt mode: the DELIVRD receipt follows the submit_sm_resp at once). The deliver_sm
 * is answered only once the receipt is stored: held while the recording lags a little, and
 * refused with ESME_RX_T_APPN when it lags past the hold, after which the SMSC's
 * redelivery ends the message `delivered`.
 */
import request from 'supertest';
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { SmppDelivery } from '../../src/smpp.js';
import { MemoryStorage, type ErrorEvent, type PartReceipt, type ReceiptResult, type SubmissionResult } from '../../src/index.js';
import { startSmsc, type SmscEvent, type SmscHandle } from '../fixtures/smsc.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';

const ESME_RX_T_APPN = 0x64;

type DeliverResp = Extract<SmscEvent, { event: 'deliver_resp' }>;
type Redeliver = Extract<SmscEvent, { event: 'redeliver' }>;

/**
 * Memory storage whose `recordSubmission` waits, after a receipt for that carrier id was
 * tried and found unknown, for `allowRecording(carrierId)` from the test: the receipt overtakes
 * the recording, by as long as the test likes. Waits at most 20 s.
 */
class LaggingStorage extends MemoryStorage {
  readonly #unknownTries = new Map<string, number>();
  readonly #released = new Set<string>();
  readonly #listeners = new Set<() => void>();
  /** Called just before a gated recording is made. */
  beforeRecording: (carrierId: string) => Promise<void> = async () => {};

  override async applyReceipt(receipt: PartReceipt): Promise<ReceiptResult> {
    const result = await super.applyReceipt(receipt);
    if (result.kind === 'unknown') {
      for (const id of receipt.carrierIds) this.#unknownTries.set(id, (this.#unknownTries.get(id) ?? 0) + 1);
      this.#notify();
    }
    return result;
  }

  /** How often a receipt naming `carrierId` was tried and found unknown. */
  unknownTries(carrierId: string): number {
    return this.#unknownTries.get(carrierId.toLowerCase()) ?? 0;
  }

  /** Lets the recording of `carrierId` go ahead. */
  allowRecording(carrierId: string): void {
    this.#released.add(carrierId.toLowerCase());
    this.#notify();
  }

  override async recordSubmission(ref: string, index: number, carrierId: string, now: number): Promise<SubmissionResult> {
    await this.#until(() => this.unknownTries(carrierId) > 0 && this.#released.has(carrierId));
    await this.beforeRecording(carrierId);
    return super.recordSubmission(ref, index, carrierId, now);
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  #until(condition: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (!condition()) return;
        clearTimeout(timer);
        this.#listeners.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#listeners.delete(check);
        resolve();
      }, 20_000);
      this.#listeners.add(check);
      check();
    });
  }
}

let smsc: SmscHandle;
let gateway: TestGateway | undefined;

beforeAll(async () => {
  smsc = await startSmsc({ password: 'secret' });
  await smsc.send({ cmd: 'set', receiptMode: 'auto' });
});

afterAll(async () => {
  await smsc?.stop();
});

afterEach(async () => {
  await gateway?.sms.close();
  gateway = undefined;
});

async function start(storage: LaggingStorage): Promise<{ gateway: TestGateway; errors: ErrorEvent[] }> {
  const delivery = new SmppDelivery({ url: `smpp://gateway:secret@127.0.0.1:${smsc.port}`, reconnectMinMs: 50, reconnectMaxMs: 200 });
  gateway = createGateway({ storage, delivery, rateLimit: false });
  const errors: ErrorEvent[] = [];
  gateway.sms.on('error', (event) => errors.push(event));
  await gateway.sms.ready();
  await delivery.waitForBind(5_000);
  return { gateway, errors };
}

async function sendOne(g: TestGateway, recipient: string): Promise<string> {
  const res = await request(g.app)
    .post('/api/outbox/create')
    .set('X-API-Key', KEY)
    .send({ profile_code: '12345', messages: [{ recipient, message: 'receipt first' }] });
  expect(res.status).toBe(200);
  return (res.body as { message_ref: string }[])[0]!.message_ref;
}

async function statusOf(g: TestGateway, ref: string): Promise<string> {
  const res = await request(g.app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', KEY);
  return (res.body as { status: string }).status;
}

/** The carrier id the SMSC issued for the first submit to `recipient` seen from `from` on. */
async function issuedId(recipient: string, from: number): Promise<string> {
  const submit = await smsc.waitFor(
    (e): e is Extract<SmscEvent, { event: 'submit' }> => e.event === 'submit' && e.destinationAddr === recipient,
    5_000,
    from,
  );
  return submit.id!;
}

describe('SmppDelivery and the router: a receipt that overtakes its recording', () => {
  it('holds the deliver_sm answer until the receipt is stored, then answers ESME_ROK once', async () => {
    const storage = new LaggingStorage();
    const { gateway: g, errors } = await start(storage);
    const from = smsc.events.length;
    let markedAt = -1;
    // A mark in the SMSC's event log taken just before the recording: an answer that did
    // not wait for the stored receipt would come before it.
    storage.beforeRecording = async () => {
      await smsc.send({ cmd: 'set' });
      markedAt = smsc.events.length - 1;
    };
    const ref = await sendOne(g, '254711000001');
    const carrierId = await issuedId('254711000001', from);
    await eventually(() => storage.unknownTries(carrierId) > 0, { timeoutMs: 5_000 });
    storage.allowRecording(carrierId);

    await eventually(async () => (await statusOf(g, ref)) === 'delivered', { timeoutMs: 5_000 });
    const answer = await smsc.waitFor((e): e is DeliverResp => e.event === 'deliver_resp', 5_000, from);
    expect(answer.status).toBe(0);
    expect(markedAt).toBeGreaterThanOrEqual(from);
    expect(smsc.events.indexOf(answer)).toBeGreaterThan(markedAt);
    await smsc.send({ cmd: 'set' });
    expect(smsc.events.slice(from).filter((e) => e.event === 'deliver_resp')).toHaveLength(1);
    expect(smsc.events.slice(from).filter((e) => e.event === 'redeliver')).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('refuses with ESME_RX_T_APPN a receipt still unmatched after the hold, and the redelivery ends the message delivered', { timeout: 20_000 }, async () => {
    const storage = new LaggingStorage();
    const { gateway: g, errors } = await start(storage);
    const from = smsc.events.length;
    const ref = await sendOne(g, '254711000002');
    const carrierId = await issuedId('254711000002', from);

    // Held for 5 s while its submission is not recorded, then refused transiently.
    const refused = await smsc.waitFor((e): e is DeliverResp => e.event === 'deliver_resp', 10_000, from);
    expect(refused.status).toBe(ESME_RX_T_APPN);
    expect(await statusOf(g, ref)).toBe('queued');

    // The recording lands; the SMSC sends the receipt again, and it is stored and answered.
    storage.allowRecording(carrierId);
    const redelivered = await smsc.waitFor((e): e is Redeliver => e.event === 'redeliver' && e.id === carrierId, 5_000, from);
    expect(redelivered).toMatchObject({ id: carrierId, delivery: 2, reason: 'refused', status: ESME_RX_T_APPN });
    await eventually(async () => (await statusOf(g, ref)) === 'delivered', { timeoutMs: 5_000 });
    await smsc.send({ cmd: 'set' });
    const answers = smsc.events.slice(from).filter((e): e is DeliverResp => e.event === 'deliver_resp');
    expect(answers.map((a) => a.status)).toEqual([ESME_RX_T_APPN, 0]);
    // The refusal is expected, not a failure: nothing reported.
    expect(errors).toEqual([]);
  });
});

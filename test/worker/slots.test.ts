/**
 * The worker's slots (`worker.concurrency`) bound the submissions at the carrier, not the
 * storage writes that record them: a slow commit does not hold up the carrier, the carrier
 * never has more than `concurrency` submissions at once, and a storage that stops answering
 * stops the worker once it holds `HELD_PER_SLOT` messages a slot.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStorage, type DeliveryAdapter, type OutgoingPart, type SubmitAck } from '../../src/index.js';
import { HELD_PER_SLOT } from '../../src/worker/submit-worker.js';
import { GatedDelivery } from '../helpers/gated-delivery.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';

let gateway: TestGateway | null = null;
afterEach(async () => {
  await gateway?.sms.close();
  gateway = null;
});

/** What happened, in order: `submit <ref>` at the carrier, `recorded <ref>` in the storage. */
type Log = string[];

/** A carrier that answers on the next turn and notes how many submits it had at once. */
class CountingDelivery implements DeliveryAdapter {
  atOnce = 0;
  mostAtOnce = 0;
  constructor(private readonly log: Log) {}
  async start(): Promise<void> {}
  async submit(part: OutgoingPart): Promise<SubmitAck> {
    this.log.push(`submit ${part.ref}`);
    this.mostAtOnce = Math.max(this.mostAtOnce, ++this.atOnce);
    await new Promise((resolve) => setImmediate(resolve));
    this.atOnce--;
    return { carrierId: `c-${part.ref}-${part.index}` };
  }
  async close(): Promise<void> {}
}

/** MemoryStorage whose recording of submissions waits until `open()`, as a stalled commit would. */
function stalledRecording(log: Log): { storage: MemoryStorage; open: () => void } {
  const storage = new MemoryStorage();
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  const record = storage.recordSubmission.bind(storage);
  storage.recordSubmission = async (ref, index, carrierId, now) => {
    await gate;
    const result = await record(ref, index, carrierId, now);
    log.push(`recorded ${ref}`);
    return result;
  };
  return { storage, open };
}

async function sendMany(app: TestGateway['app'], count: number, text = 'slots'): Promise<string[]> {
  const messages = Array.from({ length: count }, (_, i) => ({ recipient: `2547123${String(i).padStart(5, '0')}`, message: text }));
  const res = await request(app).post('/api/outbox/create').set('X-API-Key', KEY).send({ profile_code: '12345', messages });
  expect(res.status).toBe(200);
  return (res.body as { message_ref: string }[]).map((item) => item.message_ref);
}

const submits = (log: Log): number => log.filter((line) => line.startsWith('submit ')).length;

/** A gateway whose worker has `concurrency` slots, a counting carrier and a stalled recording. */
async function startGateway(concurrency: number) {
  const log: Log = [];
  const { storage, open } = stalledRecording(log);
  const delivery = new CountingDelivery(log);
  gateway = createGateway({ storage, delivery, worker: { concurrency, pollIntervalMs: 10 } });
  await gateway.sms.ready();
  return { log, storage, delivery, open, app: gateway.app };
}

/** Waits until every message of `refs` is recorded as submitted. */
async function allSubmitted(storage: MemoryStorage, refs: readonly string[]): Promise<void> {
  for (const ref of refs) {
    await eventually(async () => ((await storage.getMessage('acme', ref))?.state === 'submitted' ? true : undefined));
  }
}

describe('the worker’s slots', () => {
  it('go back when the carrier answers, not when the storage has recorded it', async () => {
    const { log, storage, delivery, open, app } = await startGateway(2);
    const refs = await sendMany(app, 2 * HELD_PER_SLOT);

    // Every message reaches the carrier while no recording has finished...
    await eventually(() => submits(log) === 2 * HELD_PER_SLOT);
    expect(log.some((line) => line.startsWith('recorded '))).toBe(false);
    // ...and the carrier never had more than the two slots' worth at once.
    expect(delivery.mostAtOnce).toBe(2);

    open();
    await allSubmitted(storage, refs);
  });

  it('are taken by each part of a multi-part message in turn, so the carrier never has more than the slots', async () => {
    const { log, storage, delivery, open, app } = await startGateway(2);
    open();
    const refs = await sendMany(app, 6, 'x'.repeat(400)); // 3 parts each
    await allSubmitted(storage, refs);
    expect(submits(log)).toBe(18);
    expect(delivery.mostAtOnce).toBe(2);
  });

  it(`stop taking messages while they hold ${HELD_PER_SLOT} a slot that a storage does not record`, async () => {
    const { log, storage, delivery, open, app } = await startGateway(1);
    const refs = await sendMany(app, HELD_PER_SLOT + 4);
    await eventually(() => submits(log) === HELD_PER_SLOT);

    open();
    await allSubmitted(storage, refs);
    // Nothing more went to the carrier before the stalled recordings were answered.
    const firstRecorded = log.findIndex((line) => line.startsWith('recorded '));
    expect(submits(log.slice(0, firstRecorded))).toBe(HELD_PER_SLOT);
    expect(submits(log)).toBe(HELD_PER_SLOT + 4);
  });

  it('are waited for by close(): the messages waiting for one are submitted before it resolves', async () => {
    const delivery = new GatedDelivery('first');
    gateway = createGateway({ delivery, worker: { concurrency: 1, pollIntervalMs: 10 } });
    await gateway.sms.ready();
    const refs = await sendMany(gateway.app, 3);
    // The first holds the only slot at the carrier; the other two wait for it.
    await eventually(() => delivery.submitted.length === 1);
    const closed = gateway.sms.close();
    delivery.open();
    await closed;
    gateway = null;
    expect(delivery.submitted).toEqual(refs);
  });
});

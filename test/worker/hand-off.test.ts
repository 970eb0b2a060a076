/**
 * The hand-off: a request's messages are stored leased to this instance's worker and
 * submitted by it straight away, without a claim, while the worker has room for them;
 * without room they are stored unleased and claimed like any other.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../src/index.js';
import { HELD_PER_SLOT } from '../../src/worker/submit-worker.js';
import { GatedDelivery } from '../helpers/gated-delivery.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';

let gateway: TestGateway | null = null;
afterEach(async () => {
  await gateway?.sms.close();
  gateway = null;
});

/** MemoryStorage that records the refs every claim returned. */
function claimRecordingStorage(): { storage: MemoryStorage; claimed: string[] } {
  const storage = new MemoryStorage();
  const claimed: string[] = [];
  const claim = storage.claimMessages.bind(storage);
  storage.claimMessages = async (options) => {
    const records = await claim(options);
    claimed.push(...records.map((record) => record.ref));
    return records;
  };
  return { storage, claimed };
}

/** Sends `count` messages in one request; their refs. */
async function sendMany(app: TestGateway['app'], count: number, expectStatus = 200): Promise<string[]> {
  const messages = Array.from({ length: count }, () => ({ recipient: '254712345678', message: 'hand-off' }));
  const res = await request(app).post('/api/outbox/create').set('X-API-Key', KEY).send({ profile_code: '12345', messages });
  expect(res.status).toBe(expectStatus);
  return res.status === 200 ? (res.body as { message_ref: string }[]).map((item) => item.message_ref) : [];
}

async function send(app: TestGateway['app'], expectStatus = 200): Promise<string> {
  const [ref] = await sendMany(app, 1, expectStatus);
  return ref ?? '';
}

const worker = { concurrency: 1, pollIntervalMs: 10 };

describe('the hand-off from a request to the worker', () => {
  it('submits a request’s messages without claiming them', async () => {
    const { storage, claimed } = claimRecordingStorage();
    const delivery = new GatedDelivery();
    delivery.open();
    gateway = createGateway({ storage, delivery, worker });
    await gateway.sms.ready();
    const ref = await send(gateway.app);
    await eventually(() => delivery.submitted.includes(ref));
    expect(claimed).toEqual([]);
  });

  it('stores what does not fit in the worker unleased, and a claim takes it once there is room', async () => {
    const { storage, claimed } = claimRecordingStorage();
    const delivery = new GatedDelivery();
    gateway = createGateway({ storage, delivery, worker });
    await gateway.sms.ready();
    // All the worker holds with its one slot: the first at the carrier, the rest waiting.
    const first = await sendMany(gateway.app, HELD_PER_SLOT);
    const second = await send(gateway.app); // no room left: stored for a claim
    delivery.open();
    await eventually(() => delivery.submitted.length === HELD_PER_SLOT + 1);
    expect(delivery.submitted).toEqual([...first, second]);
    expect(claimed).toEqual([second]);
  });

  it('gives the room back when the insert fails, so the next request is handed off again', async () => {
    const { storage, claimed } = claimRecordingStorage();
    const insert = storage.insertMessages.bind(storage);
    let failNext = true;
    storage.insertMessages = async (messages, lease) => {
      if (failNext) {
        failNext = false;
        throw new Error('storage unavailable');
      }
      return insert(messages, lease);
    };
    const delivery = new GatedDelivery();
    delivery.open();
    gateway = createGateway({ storage, delivery, worker });
    gateway.sms.on('error', () => {});
    await gateway.sms.ready();
    await send(gateway.app, 500);
    const ref = await send(gateway.app);
    await eventually(() => delivery.submitted.includes(ref));
    expect(claimed).toEqual([]);
  });
});

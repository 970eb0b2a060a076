import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeliveryError, MemoryStorage, outcome, type MessageStatusEvent } from '../../src/index.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';
import { ScriptedDelivery } from '../helpers/scripted-delivery.js';

let gateway: TestGateway;
afterEach(async () => {
  await gateway?.sms.close();
  vi.useRealTimers();
});

async function send(message: string) {
  const res = await request(gateway.app)
    .post('/api/outbox/create')
    .set('X-API-Key', KEY)
    .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message }] });
  expect(res.status).toBe(200);
  return res.body[0].message_ref as string;
}

async function status(ref: string) {
  return (await request(gateway.app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', KEY)).body;
}

/** The message's status view once its state is `state`. */
function statusOnce(ref: string, state: string) {
  return eventually(() => status(ref), { until: (s) => s.status === state, what: `${ref} to be ${state}` });
}

describe('the message lifecycle', () => {
  it('folds per-part receipts of a long message into one terminal state; duplicate and late receipts change nothing', async () => {
    const carrier = new ScriptedDelivery();
    gateway = createGateway({ delivery: carrier });
    const transitions: MessageStatusEvent[] = [];
    gateway.sms.on('message.status', (e) => transitions.push(e));
    const ref = await send('x'.repeat(400)); // 3 GSM-7 parts
    await eventually(() => carrier.submitted.length === 3);
    expect(carrier.submitted.map((p) => [p.index, p.count, p.partText.length])).toEqual([[0, 3, 153], [1, 3, 153], [2, 3, 94]]);
    expect(new Set(carrier.submitted.map((p) => p.concatRef)).size).toBe(1);
    await statusOnce(ref, 'submitted');

    const [p0, p1, p2] = carrier.submitted;
    const delivered = outcome('delivered', 'delivered_to_terminal');
    // Out of order, with the middle part's id spelled in decimal as some SMSCs do.
    await carrier.receipt({ carrierId: p2!.carrierId, outcome: delivered });
    await carrier.receipt({ carrierId: String(parseInt(p1!.carrierId, 16)), outcome: delivered });
    expect((await status(ref)).status).toBe('submitted');
    await carrier.receipt({ carrierId: p2!.carrierId, outcome: outcome('undelivered', 'absent_subscriber') }); // duplicate
    await carrier.receipt({ carrierId: p0!.carrierId.toLowerCase(), outcome: delivered });
    expect(await status(ref)).toMatchObject({ status: 'delivered', status_reason: 'delivered_to_terminal' });

    // Late receipts after the terminal state.
    await carrier.receipt({ carrierId: p0!.carrierId, outcome: outcome('expired', 'expired') });
    await carrier.receipt({ carrierId: p1!.carrierId, outcome: outcome('rejected', 'rejected') });
    expect(await status(ref)).toMatchObject({ status: 'delivered', status_reason: 'delivered_to_terminal' });
    expect(transitions.map((t) => `${t.previousState}->${t.message.state}`)).toEqual(['queued->submitted', 'submitted->delivered']);
  });

  it('ends a multipart message in the failure of its first failed part', async () => {
    const carrier = new ScriptedDelivery();
    gateway = createGateway({ delivery: carrier });
    const ref = await send('y'.repeat(200));
    await statusOnce(ref, 'submitted');
    await carrier.receipt({ carrierId: carrier.submitted[0]!.carrierId, outcome: outcome('delivered', 'delivered_to_terminal') });
    await carrier.receipt({ carrierId: carrier.submitted[1]!.carrierId, outcome: outcome('undelivered', 'absent_subscriber') });
    expect(await status(ref)).toMatchObject({ status: 'undelivered', status_reason: 'absent_subscriber' });
  });

  it('retries a retryable carrier error and ends a permanent one as rejected', async () => {
    const carrier = new ScriptedDelivery();
    let failures = 2;
    carrier.beforeSubmit = (part) => {
      if (part.recipient === '254700000001' && failures-- > 0) throw new DeliveryError('throttled', { retryAfterMs: 5 });
      if (part.recipient === '254700000002') {
        throw new DeliveryError('bad source', { permanent: true, outcome: outcome('rejected', 'invalid_source_address') });
      }
    };
    gateway = createGateway({ delivery: carrier, worker: { pollIntervalMs: 10, retryBaseMs: 5, retryMaxMs: 20 } });
    const retrying: number[] = [];
    gateway.sms.on('message.retrying', (e) => retrying.push(e.attempt));
    const res = await request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', messages: [{ recipient: '254700000001', message: 'a' }, { recipient: '254700000002', message: 'b' }] });
    const [retried, rejected] = res.body.map((m: { message_ref: string }) => m.message_ref);
    await statusOnce(retried, 'submitted');
    expect(retrying).toEqual([1, 2]);
    // Two attempts refused, the third accepted: three made.
    expect((await status(retried)).submit_attempts).toBe(3);
    await statusOnce(rejected, 'rejected');
    expect(await status(rejected)).toMatchObject({ status_reason: 'invalid_source_address', submit_attempts: 1 });
  });

  it('counts in submit_attempts every attempt made: the one accepted, the one that gave up, none for an ending without one', async () => {
    const carrier = new ScriptedDelivery();
    carrier.beforeSubmit = (part) => {
      if (part.recipient === '254700000003') throw new DeliveryError('throttled', { retryAfterMs: 5 });
    };
    gateway = createGateway({ delivery: carrier, worker: { pollIntervalMs: 10, retryBaseMs: 5, retryMaxMs: 20, maxAttempts: 3 } });
    const res = await request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', messages: [{ recipient: '254700000004', message: 'first try' }, { recipient: '254700000003', message: 'never' }] });
    const [first, gaveUp] = res.body.map((m: { message_ref: string }) => m.message_ref);
    // As docs/endpoints.md shows a delivered message: one attempt, the one the carrier took.
    expect(await statusOnce(first, 'submitted')).toMatchObject({ submit_attempts: 1 });
    expect(await statusOnce(gaveUp, 'failed')).toMatchObject({ submit_attempts: 3, status_description: expect.stringMatching(/^Gave up after 3 attempts: /) });
    await carrier.receipt({ carrierId: carrier.submitted[0]!.carrierId, outcome: outcome('delivered', 'delivered_to_terminal') });
    expect(await statusOnce(first, 'delivered')).toMatchObject({ submit_attempts: 1 });

    // Cancelled while scheduled: no attempt was made.
    const later = await request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', send_at: Math.floor(Date.now() / 1000) + 3600, messages: [{ recipient: '254700000005', message: 'later' }] });
    const scheduled = later.body[0].message_ref as string;
    expect((await status(scheduled)).submit_attempts).toBe(0);
    await request(gateway.app).delete(`/api/outbox/messages/${scheduled}`).set('X-API-Key', KEY).expect(200);
    expect(await status(scheduled)).toMatchObject({ status: 'cancelled', submit_attempts: 0 });
  });

  it('treats a DeliveryError from another copy of the package (a separately bundled adapter) as one', async () => {
    const carrier = new ScriptedDelivery();
    carrier.beforeSubmit = () => {
      // What `instanceof` cannot recognise: the class of another bundle, same global brand.
      throw Object.assign(new Error('invalid destination'), {
        [Symbol.for('sms-outbox.DeliveryError')]: true,
        permanent: true,
        outcome: outcome('rejected', 'delivery_impossible'),
        retryAfterMs: null,
      });
    };
    gateway = createGateway({ delivery: carrier });
    const ref = await send('to nowhere');
    const final = await statusOnce(ref, 'rejected');
    expect(final).toMatchObject({ status_reason: 'delivery_impossible', submit_attempts: 1 });
  });

  it('ends a message whose receipts never come as expired after worker.receiptTimeoutMs', async () => {
    // Fake: the clock (before the router is made: it takes Date.now as its clock) and the
    // timeout sweep's interval, every 100 ms here. The request and the submission run on
    // real sockets, timeouts and immediates.
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    const carrier = new ScriptedDelivery();
    gateway = createGateway({ delivery: carrier, worker: { pollIntervalMs: 10, receiptTimeoutMs: 300 } });
    const transitions: string[] = [];
    gateway.sms.on('message.status', (e) => transitions.push(`${e.previousState}->${e.message.state}`));
    await gateway.sms.ready();
    const ref = await send('silence');
    await statusOnce(ref, 'submitted');
    await vi.advanceTimersByTimeAsync(299);
    expect((await status(ref)).status).toBe('submitted');
    // The first sweep after the timeout ends it.
    await vi.advanceTimersByTimeAsync(101);
    const final = await status(ref);
    expect(final).toMatchObject({ status: 'expired', status_reason: 'unknown', status_description: 'No delivery receipt from the carrier within 300 ms' });
    expect(transitions).toEqual(['queued->submitted', 'submitted->expired']);
    // The receipt that finally comes is late and changes nothing.
    await carrier.receipt({ carrierId: carrier.submitted[0]!.carrierId, outcome: outcome('delivered', 'delivered_to_terminal') });
    expect((await status(ref)).status).toBe('expired');
  });

  it('stops submitting parts once its lease has run out, and the next claim sends only the rest', async () => {
    const carrier = new ScriptedDelivery();
    let clock = Date.now();
    // Each submit takes 600 ms of the 1,000 ms lease, by the router's clock.
    carrier.beforeSubmit = () => {
      clock += 600;
    };
    const storage = new MemoryStorage();
    const claims: number[][] = [];
    const claim = storage.claimMessages.bind(storage);
    storage.claimMessages = async (options) => {
      const claimed = await claim(options);
      if (claimed.length > 0) claims.push(claimed[0]!.parts.filter((p) => p.carrierId === null).map((p) => p.index));
      return claimed;
    };
    gateway = createGateway({ storage, delivery: carrier, now: () => clock, worker: { pollIntervalMs: 10, leaseMs: 1_000 } });
    const ref = await send('z'.repeat(400)); // 3 parts
    await statusOnce(ref, 'submitted');
    expect(carrier.submitted.map((p) => p.index)).toEqual([0, 1, 2]);
    // The first pass came with the request (stored leased to this worker), not from a
    // claim. Part 2 would have gone out past that lease: it waited for a claim of its own.
    expect(claims).toEqual([[2]]);
  });

  it('gives up after worker.maxAttempts retryable failures with failed', async () => {
    const carrier = new ScriptedDelivery();
    carrier.beforeSubmit = () => {
      throw new Error('connection refused');
    };
    gateway = createGateway({ delivery: carrier, worker: { pollIntervalMs: 10, retryBaseMs: 1, retryMaxMs: 2, maxAttempts: 3 } });
    const ref = await send('never');
    const final = await statusOnce(ref, 'failed');
    expect(final.status_description).toMatch(/Gave up after 3 attempts: connection refused/);
  });
});

describe('events', () => {
  it('a listener that throws changes no response and is reported through error', async () => {
    gateway = createGateway();
    const errors: { source: string }[] = [];
    const accepted: string[] = [];
    gateway.sms.on('error', (e) => errors.push(e));
    gateway.sms.on('message.accepted', () => {
      throw new Error('listener bug');
    });
    gateway.sms.on('message.accepted', (e) => accepted.push(e.message.ref));
    gateway.sms.on('request.rejected', () => {
      throw new Error('another listener bug');
    });
    const ref = await send('still fine');
    expect(accepted).toEqual([ref]);
    const rejected = await request(gateway.app).post('/api/outbox/create').set('X-API-Key', 'nope').send({});
    expect(rejected.status).toBe(401);
    expect(errors.map((e) => e.source)).toEqual(['listener', 'listener']);
  });

  it('off removes a listener given to on or once', async () => {
    gateway = createGateway();
    let calls = 0;
    const listener = () => {
      calls++;
    };
    gateway.sms.on('message.accepted', listener);
    gateway.sms.off('message.accepted', listener);
    gateway.sms.once('request.rejected', listener);
    await send('x');
    await request(gateway.app).post('/api/outbox/create').set('X-API-Key', 'nope').send({});
    await request(gateway.app).post('/api/outbox/create').set('X-API-Key', 'nope').send({});
    expect(calls).toBe(1);
  });
});

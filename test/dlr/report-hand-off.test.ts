/**
 * The report hand-off: a receipt that ends a message stores its delivery report leased to
 * this instance's report sender, which posts it straight away, without a claim; what the
 * sender cannot hold is handed back and claimed like any other report.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { CallbackDispatcher } from '../../src/dlr/dispatcher.js';
import { resolveDlrOptions } from '../../src/dlr/options.js';
import type { SmsEventName, SmsEvents } from '../../src/observe/events.js';
import { MemoryStorage, type Storage, type Transition } from '../../src/index.js';
import { outcome } from '../../src/lifecycle/states.js';
import { SqliteStorage } from '../../src/sqlite.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';
import { cleanupAfterEach, newMessage } from './helpers.js';
import { eventually } from '../helpers/poll.js';

const { cleanups, receiver } = cleanupAfterEach();

/** Wraps `storage` so that every report a claim returns is recorded, by uid. */
function recordClaims<S extends Storage>(storage: S): { storage: S; claimed: string[] } {
  const claimed: string[] = [];
  const claim = storage.claimCallbacks.bind(storage);
  storage.claimCallbacks = async (options) => {
    const due = await claim(options);
    claimed.push(...due.map((report) => report.uid));
    return due;
  };
  return { storage, claimed };
}

const DELIVERED = outcome('delivered', 'delivered_to_terminal');

describe('CallbackDispatcher hand-off', () => {
  /** A started dispatcher on MemoryStorage (real clock), with its events and the claims made. */
  function started(options: Parameters<typeof resolveDlrOptions>[0] = {}, now?: () => number) {
    const { storage, claimed } = recordClaims(new MemoryStorage());
    const sent: Parameters<SmsEvents['dlr.sent']>[0][] = [];
    const dispatcher = new CallbackDispatcher({
      storage,
      emit: (name: SmsEventName, payload) => {
        if (name === 'dlr.sent') sent.push(payload as Parameters<SmsEvents['dlr.sent']>[0]);
      },
      config: resolveDlrOptions({ allowPrivateAddresses: ['127.0.0.0/8'], pollIntervalMs: 10, ...options }),
      owner: 'this-instance',
      ...(now === undefined ? {} : { now }),
    });
    cleanups.push(() => dispatcher.close());
    return { storage, claimed, sent, dispatcher };
  }

  /** Ends each message by a receipt under the dispatcher's report lease, as the router does; the transitions. */
  async function endByReceipts(storage: Storage, dispatcher: CallbackDispatcher, url: string, count: number) {
    const messages = Array.from({ length: count }, () => newMessage(url, Date.now()));
    await storage.insertMessages(messages);
    const leases = messages.map(() => dispatcher.lease());
    const transitions = [];
    for (const [i, message] of messages.entries()) {
      await storage.recordSubmission(message.ref, 0, `carrier-${message.ref}`, Date.now());
      const lease = leases[i];
      const result = await storage.applyReceipt({
        carrierIds: [`carrier-${message.ref}`],
        outcome: DELIVERED,
        now: Date.now(),
        ...(lease === null ? {} : { reportLease: lease }),
      });
      if (result.kind !== 'terminal') throw new Error(`expected a terminal receipt, got ${result.kind}`);
      transitions.push(result.transition);
    }
    return transitions;
  }

  /** Hands the report a receipt stored under the dispatcher's lease over, as the receipt handler does. */
  function handOver(dispatcher: CallbackDispatcher, transition: Transition): void {
    const report = transition.leasedReport!;
    dispatcher.stored([{ uid: report.uid, message: transition.message }], { owner: 'this-instance', until: report.until });
  }

  it('offers no lease before it starts or after it closes, and one of its lease length while it runs', async () => {
    const { dispatcher } = started({ leaseMs: 45_000 }, () => 1_000);
    expect(dispatcher.lease()).toBeNull();
    dispatcher.start();
    expect(dispatcher.lease()).toEqual({ owner: 'this-instance', until: 46_000 });
    await dispatcher.close();
    expect(dispatcher.lease()).toBeNull();
  });

  it('posts a report handed over by a receipt without claiming it', async () => {
    const r = await receiver();
    const { storage, claimed, sent, dispatcher } = started();
    dispatcher.start();
    const [transition] = await endByReceipts(storage, dispatcher, `${r.origin}/dlr`, 1);
    expect(transition!.leasedReport).toBeDefined();
    handOver(dispatcher, transition!);
    await eventually(() => sent.length === 1, { what: 'the report sent' });
    expect(JSON.parse(r.requests[0]!.body).uid).toBe(transition!.leasedReport!.uid);
    expect((await storage.getMessage('principal-1', transition!.message.ref))!.callback).toMatchObject({ state: 'delivered', attempts: 1 });
    expect(claimed).toEqual([]);
  });

  it('hands back what its host’s queue cannot take, and a claim sends it later', async () => {
    // One report at a time to the host, slowly: its queue (half of the 16 held per slot
    // while its pace is unknown) fills, and the rest go back to storage for a second.
    const r = await receiver(() => ({ status: 200, delayMs: 20 }));
    const { storage, claimed, sent, dispatcher } = started({ concurrency: 1, perHostConcurrency: 1 });
    dispatcher.start();
    const transitions = await endByReceipts(storage, dispatcher, `${r.origin}/dlr`, 12);
    for (const transition of transitions) handOver(dispatcher, transition);
    await eventually(() => sent.length === 12, { timeoutMs: 10_000, what: 'every report sent' });
    const uids = transitions.map((transition) => transition.leasedReport!.uid);
    // One running and eight queued were kept; the last three were claimed after their second.
    expect(claimed).toEqual(uids.slice(9));
    expect(new Set(r.requests.map((req) => JSON.parse(req.body).uid as string))).toEqual(new Set(uids));
    expect(r.requests).toHaveLength(12);
  });

  it('hands back a report handed over while it closes, claimable at once', async () => {
    // The one attempt in flight keeps close() waiting while a receipt's report arrives.
    const r = await receiver(() => ({ status: 200, delayMs: 300 }));
    const { storage, dispatcher } = started();
    dispatcher.start();
    const [running, late] = await endByReceipts(storage, dispatcher, `${r.origin}/dlr`, 2);
    handOver(dispatcher, running!);
    await eventually(() => r.requests.length === 1, { what: 'the first attempt' });
    const closing = dispatcher.close();
    handOver(dispatcher, late!);
    await closing;
    const due = await storage.claimCallbacks({ owner: 'next-instance', limit: 10, leaseMs: 35_000, now: Date.now() });
    expect(due.map((report) => report.uid)).toEqual([late!.leasedReport!.uid]);
    expect(r.requests).toHaveLength(1);
  });
});

describe('the router hands the reports its receipts create to its sender', () => {
  for (const [name, open] of [
    ['MemoryStorage', () => new MemoryStorage()],
    [
      'SqliteStorage',
      () => {
        const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-hand-off-'));
        cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
        return new SqliteStorage({ path: join(dir, 'sms.db') });
      },
    ],
  ] as const) {
    it(`sends every report without a claim (${name})`, async () => {
      const r = await receiver();
      const { storage, claimed } = recordClaims(open());
      const gateway: TestGateway = createGateway({ storage, dlr: { allowPrivateAddresses: ['127.0.0.0/8'] } });
      cleanups.push(() => gateway.sms.close());
      const messages = Array.from({ length: 20 }, (_, i) => ({ recipient: '254712345678', message: `report ${i}` }));
      const res = await request(gateway.app)
        .post('/api/outbox/create')
        .set('X-API-Key', KEY)
        .send({ profile_code: '12345', dlr_callback_url: `${r.origin}/dlr`, messages });
      expect(res.status).toBe(200);
      const refs = (res.body as { message_ref: string }[]).map((item) => item.message_ref);
      await eventually(() => r.requests.length >= 20, { timeoutMs: 10_000, what: 'every report' });
      expect(new Set(r.requests.map((req) => JSON.parse(req.body).data.message_ref as string))).toEqual(new Set(refs));
      expect(claimed).toEqual([]);
    });
  }
});

/**
 * The storage contract suite's tests of one topic. Inbound (MO) messages and opt-outs: an
 * inbound message stored with its webhook (and its opt-out change) in one step, the webhook
 * claimed, deferred and recorded as a report is, and the opt-out list; a carrier's
 * redelivery stored once; the parts of long messages kept until whole. Skipped for an adapter
 * without the optional inbound methods (the parts' tests, without `storeInboundPart`).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { InboundPart, NewInbound, Storage } from '../../storage/contract.js';
import type { SuiteContext } from './context.js';
import { LEASE, T0 } from './fixtures.js';

/** An inbound message to short code 22021 from a subscriber, with a webhook unless `url` is null. */
export function buildInbound(overrides: Partial<NewInbound> = {}): NewInbound {
  const url = overrides.callbackUrl === undefined ? 'https://client.example/inbound' : overrides.callbackUrl;
  return {
    ref: randomUUID(),
    principalId: 'acme',
    profileCode: '22021',
    from: '254700000001',
    to: '22021',
    text: 'Hello',
    receivedAt: T0,
    callbackSecret: null,
    uid: url === null ? null : randomUUID(),
    ...overrides,
    callbackUrl: url,
  };
}

/** The inbound part of `storage`, or `null` (the test is then skipped). */
function inboundOf(storage: Storage, skip: (reason: string) => void): Required<Pick<Storage, InboundKeys>> | null {
  if (storage.insertInbound === undefined) {
    skip('the storage has no inbound methods');
    return null;
  }
  return storage as Required<Pick<Storage, InboundKeys>>;
}

/** The part store of `storage`, or `null` (the test is then skipped). */
function partsOf(storage: Storage, skip: (reason: string) => void): ((part: InboundPart) => Promise<InboundPart[]>) | null {
  if (storage.insertInbound === undefined || storage.storeInboundPart === undefined) {
    skip('the storage has no storeInboundPart (long MO messages are joined in memory)');
    return null;
  }
  return storage.storeInboundPart.bind(storage);
}

/** Part `seq` of a three-part message with key `key`. */
function buildPart(key: string, seq: number, overrides: Partial<InboundPart> = {}): InboundPart {
  return { key, seq, total: 3, text: `part ${seq}. `, receivedAt: T0 + seq, ...overrides };
}

type InboundKeys =
  | 'insertInbound' | 'claimInbound' | 'deferInbound' | 'recordInboundAttempt' | 'listInbound' | 'purgeInbound'
  | 'setOptOut' | 'findOptOuts' | 'listOptOuts';

/** Registers the tests of this topic (see the module comment). */
export function inboundTests({ describe, test }: SuiteContext): void {
  describe('inbound messages and opt-outs', () => {
    test('an inbound message is stored with its webhook, claimed by one owner at a time, oldest due first', async (storage, skip) => {
      const s = inboundOf(storage, skip);
      if (s === null) return;
      const first = buildInbound({ receivedAt: T0 });
      const second = buildInbound({ receivedAt: T0 + 10, text: 'Second' });
      await s.insertInbound(second);
      await s.insertInbound(first);
      await s.insertInbound(buildInbound({ callbackUrl: null, receivedAt: T0 + 5 }));
      assert.deepEqual(await s.claimInbound({ owner: 'a', limit: 10, leaseMs: LEASE, now: T0 - 1 }), []);
      const claimed = await s.claimInbound({ owner: 'a', limit: 10, leaseMs: LEASE, now: T0 + 20 });
      assert.deepEqual(claimed.map((due) => [due.uid, due.attempts, due.inbound.ref]), [
        [first.uid, 0, first.ref],
        [second.uid, 0, second.ref],
      ]);
      assert.deepEqual(
        { from: claimed[0]!.inbound.from, to: claimed[0]!.inbound.to, text: claimed[0]!.inbound.text, url: claimed[0]!.inbound.callbackUrl },
        { from: first.from, to: first.to, text: first.text, url: first.callbackUrl },
      );
      assert.deepEqual(await s.claimInbound({ owner: 'b', limit: 10, leaseMs: LEASE, now: T0 + 30 }), []);
      // The first owner crashed: after its lease, another takes the webhooks, same uids.
      const retaken = await s.claimInbound({ owner: 'b', limit: 10, leaseMs: LEASE, now: T0 + 20 + LEASE });
      assert.deepEqual(retaken.map((due) => due.uid), [first.uid, second.uid]);
    });

    test('a webhook stored under a lease is not claimed until the lease ends; a deferred one comes back at its time', async (storage, skip) => {
      const s = inboundOf(storage, skip);
      if (s === null) return;
      const leased = buildInbound();
      await s.insertInbound(leased, { lease: { owner: 'me', until: T0 + LEASE } });
      assert.deepEqual(await s.claimInbound({ owner: 'other', limit: 10, leaseMs: LEASE, now: T0 + LEASE - 1 }), []);
      await s.deferInbound([leased.uid!], T0 + 100);
      assert.deepEqual(await s.claimInbound({ owner: 'other', limit: 10, leaseMs: LEASE, now: T0 + 99 }), []);
      const back = await s.claimInbound({ owner: 'other', limit: 10, leaseMs: LEASE, now: T0 + 100 });
      assert.deepEqual(back.map((due) => [due.uid, due.attempts]), [[leased.uid, 0]]);
      await s.deferInbound([], T0);
    });

    test('attempts are recorded: a retry is due again at its time, a delivered or failed webhook is done', async (storage, skip) => {
      const s = inboundOf(storage, skip);
      if (s === null) return;
      const retried = buildInbound({ principalId: 'p1' });
      const delivered = buildInbound({ principalId: 'p1', receivedAt: T0 + 1 });
      await s.insertInbound(retried);
      await s.insertInbound(delivered);
      await s.claimInbound({ owner: 'a', limit: 10, leaseMs: LEASE, now: T0 + 2 });
      await s.recordInboundAttempt(retried.uid!, { result: 'retry', statusCode: 500, error: 'HTTP 500', nextAttemptAt: T0 + 5_000, now: T0 + 3 });
      await s.recordInboundAttempt(delivered.uid!, { result: 'delivered', statusCode: 204, error: null, nextAttemptAt: null, now: T0 + 3 });
      // Recorded once only: a finished webhook ignores a late attempt.
      await s.recordInboundAttempt(delivered.uid!, { result: 'failed', statusCode: 500, error: 'late', nextAttemptAt: null, now: T0 + 4 });
      assert.deepEqual(await s.claimInbound({ owner: 'b', limit: 10, leaseMs: LEASE, now: T0 + 4_999 }), []);
      const again = await s.claimInbound({ owner: 'b', limit: 10, leaseMs: LEASE, now: T0 + 5_000 });
      assert.deepEqual(again.map((due) => [due.uid, due.attempts]), [[retried.uid, 1]]);
      const listed = await s.listInbound({ principalId: 'p1', limit: 10 });
      assert.deepEqual(listed.map((record) => record.ref), [delivered.ref, retried.ref]);
      assert.deepEqual(listed[0]!.callback, { state: 'delivered', attempts: 1, lastStatusCode: 204, lastError: null, nextAttemptAt: null });
      assert.equal(listed[1]!.callback?.state, 'pending');
      assert.equal(listed[1]!.callback?.lastStatusCode, 500);
    });

    test('lists inbound messages newest first, of everyone or one principal, and purges old finished ones', async (storage, skip) => {
      const s = inboundOf(storage, skip);
      if (s === null) return;
      const unowned = buildInbound({ principalId: null, profileCode: null, callbackUrl: null, receivedAt: T0 });
      const pending = buildInbound({ principalId: 'p2', receivedAt: T0 + 1 });
      const recent = buildInbound({ principalId: 'p2', callbackUrl: null, receivedAt: T0 + 1_000 });
      for (const message of [unowned, pending, recent]) await s.insertInbound(message);
      assert.deepEqual((await s.listInbound({ limit: 10 })).map((r) => r.ref), [recent.ref, pending.ref, unowned.ref]);
      assert.deepEqual((await s.listInbound({ principalId: 'p2', limit: 1 })).map((r) => r.ref), [recent.ref]);
      assert.equal((await s.listInbound({ limit: 10 }))[2]!.callback, null);
      // Only the unowned one is old and done: a pending webhook keeps its message.
      assert.equal(await s.purgeInbound(T0 + 500, 10), 1);
      assert.deepEqual((await s.listInbound({ limit: 10 })).map((r) => r.ref), [recent.ref, pending.ref]);
    });

    test('an inbound message opts its sender out of the short code (or back in) in the same step', async (storage, skip) => {
      const s = inboundOf(storage, skip);
      if (s === null) return;
      const key = { shortCode: '22021', number: '254700000009' };
      const stop = buildInbound({ from: key.number, text: 'STOP' });
      assert.deepEqual(await s.insertInbound(stop, { optOut: true }), { optOutChanged: true });
      assert.deepEqual(await s.findOptOuts([key, { shortCode: '22022', number: key.number }]), [true, false]);
      assert.deepEqual(await s.insertInbound(buildInbound({ from: key.number, text: 'stop' }), { optOut: true }), { optOutChanged: false });
      assert.deepEqual(await s.listOptOuts({ limit: 10 }), [{ ...key, createdAt: T0 }]);
      assert.deepEqual(await s.insertInbound(buildInbound({ from: key.number, text: 'START' }), { optOut: false }), { optOutChanged: true });
      assert.deepEqual(await s.findOptOuts([key]), [false]);
      assert.deepEqual(await s.insertInbound(buildInbound({ from: key.number, text: 'hi' })), { optOutChanged: false });
    });

    test('a message repeating the newest of its sender and recipient, by redelivery key within the window, is not stored', async (storage, skip) => {
      const s = inboundOf(storage, skip);
      if (s === null) return;
      const from = '254700000010';
      const once = (key: string, since: number) => ({ once: { key, since } });
      const first = buildInbound({ from, text: 'STOP', receivedAt: T0 });
      assert.deepEqual(await s.insertInbound(first, { optOut: true, ...once('k-stop', T0 - 600_000) }), { optOutChanged: true });
      // Delivered again: nothing stored, no opt-out change, whatever the opt-out asks.
      const again = buildInbound({ from, text: 'STOP', receivedAt: T0 + 5_000 });
      assert.deepEqual(await s.insertInbound(again, { optOut: false, ...once('k-stop', T0 + 5_000 - 600_000) }), {
        optOutChanged: false,
        duplicate: true,
      });
      assert.deepEqual(await s.findOptOuts([{ shortCode: first.to, number: from }]), [true]);
      // The same key from another sender, or to another recipient, is another conversation.
      assert.deepEqual(await s.insertInbound(buildInbound({ from: '254700000011', text: 'STOP' }), once('k-stop', T0 - 600_000)), {
        optOutChanged: false,
      });
      assert.deepEqual(await s.insertInbound(buildInbound({ from, to: '22022', text: 'STOP' }), once('k-stop', T0 - 600_000)), {
        optOutChanged: false,
      });
      // Another message between: the same key again is a new message (STOP, START, STOP).
      await s.insertInbound(buildInbound({ from, text: 'START', receivedAt: T0 + 6_000 }), { optOut: false, ...once('k-start', T0) });
      const third = buildInbound({ from, text: 'STOP', receivedAt: T0 + 7_000 });
      assert.deepEqual(await s.insertInbound(third, { optOut: true, ...once('k-stop', T0) }), { optOutChanged: true });
      // Outside the window (received before `since`), the same key is a new message too.
      const later = buildInbound({ from, text: 'STOP', receivedAt: T0 + 900_000 });
      assert.deepEqual(await s.insertInbound(later, once('k-stop', T0 + 8_000)), { optOutChanged: false });
      const mine = (await s.listInbound({ limit: 20 })).filter((r) => r.from === from && r.to === first.to).map((r) => r.ref);
      assert.deepEqual(mine, [later.ref, third.ref, mine[2], first.ref]);
      assert.equal(mine.includes(again.ref), false);
    });

    test('the parts of a long message: each stored, one replacing its own number, all returned in order; purged when old', async (storage, skip) => {
      const store = partsOf(storage, skip);
      if (store === null) return;
      const s = storage as Required<Pick<Storage, InboundKeys>>;
      assert.deepEqual(await store(buildPart('m1', 3)), [buildPart('m1', 3)]);
      assert.deepEqual(await store(buildPart('other', 1)), [buildPart('other', 1)]);
      const replaced = buildPart('m1', 3, { text: 'sent again. ', receivedAt: T0 + 50 });
      assert.deepEqual(await store(replaced), [replaced]);
      assert.deepEqual(await store(buildPart('m1', 1)), [buildPart('m1', 1), replaced]);
      // Purging removes the parts received before its bound, and counts only messages.
      assert.equal(await s.purgeInbound(T0 + 10, 100), 0);
      assert.deepEqual(await store(buildPart('m1', 2, { receivedAt: T0 + 60 })), [replaced, buildPart('m1', 2, { receivedAt: T0 + 60 })].sort((a, b) => a.seq - b.seq));
      assert.deepEqual(await store(buildPart('other', 2)), [buildPart('other', 2)]);
    });

    test('a purge takes every old part, however many, whatever its limit of messages', async (storage, skip) => {
      const store = partsOf(storage, skip);
      if (store === null) return;
      const s = storage as Required<Pick<Storage, InboundKeys>>;
      // More parts than a purge's limit and than any adapter's transaction chunk, with no
      // message to purge: the retention sweep stops at a call that purged fewer messages than
      // its limit, so parts a call leaves behind would stay until more messages age.
      const old = 250;
      for (let seq = 1; seq <= old; seq++) await store(buildPart('crowded', seq, { total: old + 1, receivedAt: T0 }));
      assert.equal(await s.purgeInbound(T0 + 1, 10), 0);
      const last = buildPart('crowded', old + 1, { total: old + 1, receivedAt: T0 + 2 });
      assert.deepEqual(await store(last), [last]);
    });

    test('a purge with limit 0 takes the old parts and no message', async (storage, skip) => {
      const store = partsOf(storage, skip);
      if (store === null) return;
      const s = storage as Required<Pick<Storage, InboundKeys>>;
      const kept = buildInbound({ callbackUrl: null, receivedAt: T0 });
      await s.insertInbound(kept);
      await store(buildPart('alone', 1, { receivedAt: T0 }));
      assert.equal(await s.purgeInbound(T0 + 1, 0), 0);
      const later = buildPart('alone', 2, { receivedAt: T0 + 2 });
      assert.deepEqual(await store(later), [later]);
      assert.deepEqual((await s.listInbound({ limit: 10 })).map((m) => m.ref), [kept.ref]);
    });

    test('parts of one message stored at the same time: the last one stored sees them all', async (storage, skip) => {
      const store = partsOf(storage, skip);
      if (store === null) return;
      const total = 6;
      const results = await Promise.all(
        Array.from({ length: total }, (_, i) => store(buildPart('together', i + 1, { total }))),
      );
      const seen = results.map((parts) => parts.length).sort((a, b) => a - b);
      assert.equal(seen[seen.length - 1], total, `one call must see every part, saw ${JSON.stringify(seen)}`);
      assert.deepEqual(new Set(seen).size, total, `each call sees the parts stored before it: ${JSON.stringify(seen)}`);
    });

    test('the opt-out list: set, looked up in bulk, listed by short code then number, a page at a time', async (storage, skip) => {
      const s = inboundOf(storage, skip);
      if (s === null) return;
      const entries = [
        { shortCode: '300', number: '254700000002' },
        { shortCode: '200', number: '254700000003' },
        { shortCode: '300', number: '254700000001' },
      ];
      for (const [i, entry] of entries.entries()) assert.equal(await s.setOptOut(entry, true, T0 + i), true);
      assert.equal(await s.setOptOut(entries[0]!, true, T0 + 9), false);
      assert.deepEqual(await s.findOptOuts([]), []);
      assert.deepEqual(await s.findOptOuts([...entries, { shortCode: '200', number: '254700000001' }]), [true, true, true, false]);
      const all = await s.listOptOuts({ limit: 10 });
      assert.deepEqual(all.map((e) => `${e.shortCode}/${e.number}`), ['200/254700000003', '300/254700000001', '300/254700000002']);
      assert.equal(all[2]!.createdAt, T0);
      const page = await s.listOptOuts({ limit: 2, after: { shortCode: '200', number: '254700000003' } });
      assert.deepEqual(page.map((e) => e.number), ['254700000001', '254700000002']);
      assert.deepEqual((await s.listOptOuts({ shortCode: '300', limit: 1 })).map((e) => e.number), ['254700000001']);
      assert.equal(await s.setOptOut(entries[1]!, false, T0 + 10), true);
      assert.equal(await s.setOptOut(entries[1]!, false, T0 + 11), false);
      assert.deepEqual(await s.findOptOuts([entries[1]!]), [false]);
    });
  });
}

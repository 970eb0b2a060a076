/**
 * The storage contract suite's tests of one topic. What the submit worker records after an
 * attempt: a part's carrier id (`recordSubmission`, which moves a message to `submitted`
 * with its last part) and a retry later (`reschedule`). Kept as a topic of its own because
 * these are the steps that end a claim's lease, so they decide whether a message can be
 * sent twice or lost.
 */
import assert from 'node:assert/strict';
import type { SuiteContext } from './context.js';
import { buildNewMessage, FAILED, LEASE, receipt, refsOf, T0, withoutTimes } from './fixtures.js';

/** Registers the tests of this topic (see the module comment). */
export function submissionTests({ describe, test, insert, get }: SuiteContext): void {
  describe('recordSubmission', () => {
    test('the only part moves the message to submitted and ends its lease', async (storage) => {
      const [message] = await insert(storage, buildNewMessage());
      await storage.claimMessages({ owner: 'w', limit: 1, leaseMs: LEASE, now: T0 });
      const result = await storage.recordSubmission(message!.ref, 0, 'abc123', T0 + 5);
      assert.equal(result.kind, 'submitted');
      assert.ok(result.kind === 'submitted');
      assert.equal(result.transition.previousState, 'queued');
      assert.equal(result.transition.message.state, 'submitted');
      assert.equal(result.transition.message.updatedAt, T0 + 5);
      assert.deepEqual(withoutTimes(result.transition.message.parts), [{ index: 0, carrierId: 'abc123', outcome: null }]);
      const record = await get(storage, message!);
      assert.equal(record.state, 'submitted');
      assert.deepEqual(await storage.claimMessages({ owner: 'w2', limit: 1, leaseMs: LEASE, now: T0 + 2 * LEASE }), []);
    });

    test('a multipart message is submitted only with its last part', async (storage) => {
      const [message] = await insert(storage, buildNewMessage({ smsCount: 3 }));
      assert.deepEqual(await storage.recordSubmission(message!.ref, 2, 'c2', T0 + 1), { kind: 'part', ref: message!.ref });
      assert.deepEqual(await storage.recordSubmission(message!.ref, 0, 'c0', T0 + 2), { kind: 'part', ref: message!.ref });
      assert.equal((await get(storage, message!)).state, 'queued');
      const last = await storage.recordSubmission(message!.ref, 1, 'c1', T0 + 3);
      assert.equal(last.kind, 'submitted');
      assert.deepEqual(
        (await get(storage, message!)).parts.map((part) => part.carrierId),
        ['c0', 'c1', 'c2'],
      );
    });

    test('is stale for a terminal message or an unknown ref, yet a receipt for it is matched as late', async (storage) => {
      const [message] = await insert(storage, buildNewMessage());
      await storage.finish(message!.ref, FAILED, T0 + 1);
      assert.deepEqual(await storage.recordSubmission(message!.ref, 0, 'late-id', T0 + 2), {
        kind: 'stale',
        ref: message!.ref,
      });
      assert.equal((await storage.recordSubmission('no-such-ref', 0, 'x', T0 + 2)).kind, 'stale');
      assert.deepEqual(
        await storage.applyReceipt(receipt('late-id')),
        { kind: 'late', ref: message!.ref },
        'a receipt for a carrier id recorded by a `stale` submission is `late`, not `unknown` (rule: a stale submission still stores its carrier id on the part; else the carrier is asked to resend a receipt no one will ever match)',
      );
      const record = await get(storage, message!);
      assert.equal(record.state, 'failed');
      assert.equal(record.statusDescription, FAILED.description);
    });

    test('a part submitted twice keeps every carrier id it was given', async (storage) => {
      const [message] = await insert(storage, buildNewMessage({ smsCount: 2 }));
      await storage.recordSubmission(message!.ref, 0, 'first-owner', T0 + 1);
      assert.equal((await storage.recordSubmission(message!.ref, 0, 'second-owner', T0 + 2)).kind, 'part');
      assert.equal((await get(storage, message!)).parts[0]!.carrierId, 'second-owner');
      assert.equal((await storage.recordSubmission(message!.ref, 1, 'other-part', T0 + 3)).kind, 'submitted');
      assert.deepEqual(await storage.applyReceipt(receipt('first-owner')), { kind: 'part', ref: message!.ref });
      assert.deepEqual(await storage.applyReceipt(receipt('second-owner')), { kind: 'duplicate', ref: message!.ref });
    });
  });

  describe('reschedule', () => {
    test('counts the attempt, keeps the error, ends the lease and delays the message', async (storage) => {
      const [message] = await insert(storage, buildNewMessage());
      await storage.claimMessages({ owner: 'w1', limit: 1, leaseMs: LEASE, now: T0 });
      await storage.reschedule(message!.ref, T0 + 5_000, 'carrier throttled', T0 + 10);
      const record = await get(storage, message!);
      assert.equal(record.state, 'queued');
      assert.equal(record.attempts, 1);
      assert.equal(record.lastError, 'carrier throttled');
      assert.deepEqual(await storage.claimMessages({ owner: 'w2', limit: 1, leaseMs: LEASE, now: T0 + 4_999 }), []);
      // Due before the first lease would have run out: the lease ended with the reschedule.
      const again = await storage.claimMessages({ owner: 'w2', limit: 1, leaseMs: LEASE, now: T0 + 5_000 });
      assert.deepEqual(refsOf(again), [message!.ref]);
      assert.equal(again[0]!.attempts, 1);
      await storage.reschedule(message!.ref, T0 + 9_000, 'again', T0 + 5_010);
      assert.equal((await get(storage, message!)).attempts, 2);
    });

    test('does nothing to a message that is no longer queued', async (storage) => {
      const [message] = await insert(storage, buildNewMessage());
      await storage.finish(message!.ref, FAILED, T0 + 1);
      await storage.reschedule(message!.ref, T0 + 5_000, 'too late', T0 + 2);
      const record = await get(storage, message!);
      assert.equal(record.state, 'failed');
      assert.equal(record.attempts, 0);
      assert.deepEqual(await storage.claimMessages({ owner: 'w', limit: 1, leaseMs: LEASE, now: T0 + 10_000 }), []);
    });
  });
}

/**
 * The storage contract suite's tests of one topic. Ending messages without a receipt:
 * `finish` (the worker gives up, or the carrier rejects) and `expireOverdue` (no receipt
 * came in time), each once, with the pending delivery report made in the same step. Kept
 * as a topic of its own because a message must end exactly once and its report must never
 * be lost between the two.
 */
import assert from 'node:assert/strict';
import { outcome } from '../../lifecycle/states.js';
import type { SuiteContext } from './context.js';
import { buildNewMessage, EXPIRED, FAILED, LEASE, receipt, T0 } from './fixtures.js';

/** Registers the tests of this topic (see the module comment). */
export function endingTests({ describe, test, insert, get, submitAll }: SuiteContext): void {
  describe('finish', () => {
    test('ends a queued message once; a second finish returns null and changes nothing', async (storage) => {
      const [message] = await insert(storage, buildNewMessage());
      const transition = await storage.finish(message!.ref, FAILED, T0 + 7);
      assert.ok(transition);
      assert.equal(transition.previousState, 'queued');
      assert.equal(transition.message.state, 'failed');
      assert.equal(transition.message.statusReason, 'unknown');
      assert.equal(transition.message.statusDescription, FAILED.description);
      assert.equal(transition.message.updatedAt, T0 + 7);
      assert.equal(transition.message.callback, null);
      assert.equal(await storage.finish(message!.ref, outcome('rejected', 'rejected'), T0 + 8), null);
      const record = await get(storage, message!);
      assert.equal(record.state, 'failed');
      assert.equal(record.updatedAt, T0 + 7);
      assert.equal(record.callback, null);
      assert.deepEqual(await storage.claimCallbacks({ owner: 'd', limit: 10, leaseMs: LEASE, now: T0 + 100 }), []);
    });

    test('ends a submitted message', async (storage) => {
      const [message] = await insert(storage, buildNewMessage());
      await submitAll(storage, message!);
      const transition = await storage.finish(message!.ref, EXPIRED, T0 + 50);
      assert.equal(transition?.previousState, 'submitted');
      assert.equal(transition?.message.state, 'expired');
    });

    test('creates the pending delivery report with the terminal state when there is a URL', async (storage) => {
      const [message] = await insert(storage, buildNewMessage({ callbackUrl: 'https://client.example/dlr' }));
      const transition = await storage.finish(message!.ref, FAILED, T0 + 7);
      const pending = { state: 'pending', attempts: 0, lastStatusCode: null, lastError: null, nextAttemptAt: T0 + 7 };
      assert.deepEqual(transition?.message.callback, pending);
      assert.deepEqual((await get(storage, message!)).callback, pending);
      const due = await storage.claimCallbacks({ owner: 'd', limit: 10, leaseMs: LEASE, now: T0 + 7 });
      assert.equal(due.length, 1);
      assert.equal(typeof due[0]!.uid, 'string');
      assert.ok(due[0]!.uid.length > 0);
      assert.equal(due[0]!.attempts, 0);
      assert.equal(due[0]!.message.ref, message!.ref);
      assert.equal(due[0]!.message.state, 'failed');
    });

    test('returns null for an unknown ref', async (storage) => {
      assert.equal(await storage.finish('no-such-ref', FAILED, T0), null);
    });
  });

  describe('expireOverdue', () => {
    test('ends only submitted messages unchanged since before the cut-off, oldest first, up to the limit', async (storage) => {
      const NO_RECEIPT = outcome('expired', 'unknown', 'No receipt');
      const [early, later, recent, queued] = await insert(
        storage,
        buildNewMessage({ callbackUrl: 'https://client.example/dlr' }),
        buildNewMessage(),
        buildNewMessage(),
        buildNewMessage(),
      );
      await submitAll(storage, early!, T0 + 10);
      await submitAll(storage, later!, T0 + 20);
      await submitAll(storage, recent!, T0 + 500);
      const first = await storage.expireOverdue(T0 + 100, 1, NO_RECEIPT, T0 + 1000);
      assert.deepEqual(first.map((t) => [t.message.ref, t.previousState, t.message.state, t.message.statusReason]), [
        [early!.ref, 'submitted', 'expired', 'unknown'],
      ]);
      assert.equal(first[0]!.message.callback?.state, 'pending');
      const rest = await storage.expireOverdue(T0 + 100, 10, NO_RECEIPT, T0 + 1000);
      assert.deepEqual(rest.map((t) => t.message.ref), [later!.ref]);
      assert.deepEqual(await storage.expireOverdue(T0 + 100, 10, NO_RECEIPT, T0 + 1000), []);
      assert.equal((await get(storage, recent!)).state, 'submitted');
      assert.equal((await get(storage, queued!)).state, 'queued');
      // A late receipt for an expired message changes nothing.
      const late = await storage.applyReceipt(receipt(`${early!.ref}-c0`));
      assert.equal(late.kind, 'late');
      assert.equal((await get(storage, early!)).state, 'expired');
    });
  });
}

/**
 * The storage contract suite's tests of one topic. `updatedAt`: when a message last changed,
 * set to the call's `now` by every call that changes the message (a part submitted, a retry,
 * a part's receipt, an ending, a promotion, a cancel), and left alone by a call that changes
 * nothing (a `stale` submission, a `duplicate` or `late` receipt). Kept as a topic of its own
 * because receipt timeouts (`expireOverdue`) and retention (`purge`) pick messages by it: one
 * left at its acceptance time ends a message that just had a receipt, or purges it too soon.
 */
import assert from 'node:assert/strict';
import type { SuiteContext } from './context.js';
import { buildNewMessage, DELIVERED, FAILED, LEASE, receipt, T0 } from './fixtures.js';

const RULE = '(rule: updatedAt is the `now` of the last call that changed the message)';

/** Registers the tests of this topic (see the module comment). */
export function updatedAtTests({ describe, test, insert, get }: SuiteContext): void {
  describe('updatedAt', () => {
    test('is the acceptance time when stored, and each change moves it to the call’s now', async (storage) => {
      const [message] = await insert(storage, buildNewMessage({ smsCount: 2, createdAt: T0 + 3 }));
      const at = async () => (await get(storage, message!)).updatedAt;
      assert.equal(await at(), T0 + 3, `a new message's updatedAt is its createdAt ${RULE}`);
      await storage.claimMessages({ owner: 'w', limit: 1, leaseMs: LEASE, now: T0 + 10 });
      await storage.reschedule(message!.ref, T0 + 50, 'busy', T0 + 20);
      assert.equal(await at(), T0 + 20, `after reschedule ${RULE}`);
      await storage.recordSubmission(message!.ref, 0, `${message!.ref}-c0`, T0 + 60);
      assert.equal(await at(), T0 + 60, `after a part's submission ${RULE}`);
      assert.deepEqual(await storage.applyReceipt(receipt(`${message!.ref}-c0`, DELIVERED, T0 + 70)), { kind: 'part', ref: message!.ref });
      assert.equal(await at(), T0 + 70, `after a part's receipt ${RULE}`);
      await storage.recordSubmission(message!.ref, 1, `${message!.ref}-c1`, T0 + 80);
      assert.equal(await at(), T0 + 80, `after the last part's submission ${RULE}`);
      assert.deepEqual(await storage.applyReceipt(receipt(`${message!.ref}-c0`, DELIVERED, T0 + 85)), { kind: 'duplicate', ref: message!.ref });
      assert.equal(await at(), T0 + 80, `a duplicate receipt changes nothing ${RULE}`);
      await storage.applyReceipt(receipt(`${message!.ref}-c1`, DELIVERED, T0 + 90));
      assert.equal(await at(), T0 + 90, `after the receipt that ended it ${RULE}`);
    });

    test('finish and expireOverdue set it; a stale submission and a late receipt leave it', async (storage) => {
      const [finished, overdue] = await insert(storage, buildNewMessage(), buildNewMessage());
      await storage.finish(finished!.ref, FAILED, T0 + 40);
      assert.equal((await get(storage, finished!)).updatedAt, T0 + 40, `after finish ${RULE}`);
      assert.equal((await storage.recordSubmission(finished!.ref, 0, 'late-c0', T0 + 50)).kind, 'stale');
      assert.equal((await get(storage, finished!)).updatedAt, T0 + 40, `a stale submission changes no state ${RULE}`);
      assert.equal((await storage.applyReceipt(receipt('late-c0', DELIVERED, T0 + 60))).kind, 'late');
      assert.equal((await get(storage, finished!)).updatedAt, T0 + 40, `a late receipt changes no state ${RULE}`);
      await storage.recordSubmission(overdue!.ref, 0, 'overdue-c0', T0 + 5);
      await storage.expireOverdue(T0 + 100, 10, FAILED, T0 + 200);
      assert.equal((await get(storage, overdue!)).updatedAt, T0 + 200, `after expireOverdue ${RULE}`);
    });

    test('promoteScheduled, cancelMessages and expireUnsent set it', async (storage, skip) => {
      const { promoteScheduled, cancelMessages, expireUnsent } = storage;
      if (promoteScheduled === undefined || cancelMessages === undefined || expireUnsent === undefined) {
        skip('the adapter has no promoteScheduled / expireUnsent / cancelMessages');
        return;
      }
      const [promoted, cancelled, stale] = await insert(
        storage,
        buildNewMessage({ sendAt: T0 + 100 }),
        buildNewMessage({ sendAt: T0 + 100_000 }),
        buildNewMessage({ validUntil: T0 + 50 }),
      );
      await promoteScheduled.call(storage, T0 + 150, 10);
      assert.equal((await get(storage, promoted!)).updatedAt, T0 + 150, `after promoteScheduled ${RULE}`);
      await cancelMessages.call(storage, 'principal-a', [cancelled!.ref], T0 + 160);
      assert.equal((await get(storage, cancelled!)).updatedAt, T0 + 160, `after cancelMessages ${RULE}`);
      await expireUnsent.call(storage, T0 + 170, 10);
      assert.equal((await get(storage, stale!)).updatedAt, T0 + 170, `after expireUnsent ${RULE}`);
    });
  });
}

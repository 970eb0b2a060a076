/**
 * The storage contract suite's tests of one topic. Purging old terminal messages: what
 * goes (the message, its carrier ids, its finished report), what stays (anything not
 * terminal, not old enough, or with a report still pending), and the limit. Kept as a
 * topic of its own because a purge that takes too much loses data a client can still ask
 * about; one that leaves carrier ids behind makes a later receipt match a deleted message.
 */
import assert from 'node:assert/strict';
import type { SuiteContext } from './context.js';
import { buildNewMessage, DELIVERED, FAILED, LEASE, receipt, refsOf, T0 } from './fixtures.js';

/** Registers the tests of this topic (see the module comment). */
export function retentionTests({ describe, test, insert, submitAll }: SuiteContext): void {
  describe('purge', () => {
    test('deletes old terminal messages only, keeps pending reports, and respects the limit', async (storage) => {
      const queued = buildNewMessage({ createdAt: T0 });
      const submitted = buildNewMessage({ createdAt: T0 });
      const oldDone = Array.from({ length: 3 }, () => buildNewMessage({ createdAt: T0 }));
      const recentDone = buildNewMessage({ createdAt: T0 });
      const pendingReport = buildNewMessage({ createdAt: T0, callbackUrl: 'https://client.example/dlr' });
      const sentReport = buildNewMessage({ createdAt: T0, callbackUrl: 'https://client.example/dlr' });
      await storage.insertMessages([queued, submitted, ...oldDone, recentDone, pendingReport, sentReport]);
      await submitAll(storage, submitted);
      const oldIds: string[] = [];
      for (const message of oldDone) {
        oldIds.push(...(await submitAll(storage, message)));
        await storage.applyReceipt(receipt(oldIds.at(-1)!, DELIVERED, T0 + 100));
      }
      await storage.finish(recentDone.ref, FAILED, T0 + 5_000);
      await storage.finish(pendingReport.ref, FAILED, T0 + 100);
      await storage.finish(sentReport.ref, FAILED, T0 + 100);
      const due = await storage.claimCallbacks({ owner: 'd', limit: 10, leaseMs: LEASE, now: T0 + 200 });
      const sent = due.find((callback) => callback.message.ref === sentReport.ref)!;
      await storage.recordCallbackAttempt(sent.uid, {
        result: 'delivered',
        statusCode: 200,
        error: null,
        nextAttemptAt: null,
        now: T0 + 201,
      });

      const before = T0 + 1_000;
      assert.equal(await storage.purge(before, 2), 2);
      assert.equal(await storage.purge(before, 10), 2);
      assert.equal(await storage.purge(before, 10), 0);

      for (const message of [...oldDone, sentReport]) {
        assert.equal(await storage.getMessage('principal-a', message.ref), null, 'old terminal message is purged');
      }
      for (const message of [queued, submitted, recentDone, pendingReport]) {
        assert.ok(await storage.getMessage('principal-a', message.ref), 'message is kept');
      }
      // Their carrier ids go with them.
      assert.deepEqual(await storage.applyReceipt(receipt(oldIds[0]!)), { kind: 'unknown' });
      const stillDue = await storage.claimCallbacks({ owner: 'd2', limit: 10, leaseMs: LEASE, now: T0 + 10 * LEASE });
      assert.deepEqual(refsOf(stillDue.map((callback) => callback.message)), [pendingReport.ref]);
    });

    test('drops every carrier id of a purged message, one replaced by a second submission too, but not one a carrier reused for a later message', async (storage) => {
      const [ended, later] = await insert(storage, buildNewMessage({ smsCount: 2 }), buildNewMessage());
      await storage.recordSubmission(ended!.ref, 0, 'first-try', T0 + 1);
      await storage.recordSubmission(ended!.ref, 0, 'second-try', T0 + 2);
      await storage.recordSubmission(ended!.ref, 1, 'reused', T0 + 3);
      await storage.recordSubmission(later!.ref, 0, 'reused', T0 + 4);
      await storage.finish(ended!.ref, FAILED, T0 + 5);

      assert.equal(await storage.purge(T0 + 1_000, 10), 1);
      assert.deepEqual(await storage.applyReceipt(receipt('first-try')), { kind: 'unknown' });
      assert.deepEqual(await storage.applyReceipt(receipt('second-try')), { kind: 'unknown' });
      const reused = await storage.applyReceipt(receipt('reused', DELIVERED, T0 + 2_000));
      assert.equal(reused.kind, 'terminal');
      assert.equal(reused.kind === 'terminal' && reused.ref, later!.ref);
    });
  });
}

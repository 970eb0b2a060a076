/**
 * The record-store contract suite's tests of one topic: what a store tells the library about
 * its submit queue. `queueEnds` gives the principal's last `orderKey` and the class's head,
 * which the library places new messages with (the fair order); the optional `countQueued`
 * counts the queue by class, for the metrics and the backlog answer. Kept as a topic of its
 * own because a wrong end places a principal's messages ahead of everyone, or behind.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { RecordSuiteContext } from './context.js';
import { buildMessageRow, T0 } from './fixtures.js';

const PRINCIPAL_LAST = "(rule: queueEnds' principalLast is the greatest orderKey among the principal's rows in that queue, whatever their due time or lease, or null)";
const HEAD = "(rule: queueEnds' head is the smallest orderKey a claim at now could take in that queue (due, unleased, valid); when none could, the greatest orderKey in it; null when it is empty)";
const COUNT = '(rule: countQueued counts the rows in the submit queue, queue 0 as transactional and 1 as bulk, with the smallest record.sendAt ?? record.createdAt among them; all, or one principal\'s)';

const NOW = T0 + 1_000;

/** Registers the tests of this topic (see the module comment). */
export function queueTests({ describe, test, insert }: RecordSuiteContext): void {
  describe('queueEnds', () => {
    test('is null at both ends for an empty queue', async (store) => {
      await insert(store, buildMessageRow({ queue: 0, orderKey: 3 }), buildMessageRow({ queue: null, orderKey: 9 }));
      assert.deepEqual(await store.queueEnds(1, 'principal-a', NOW), { principalLast: null, head: null }, `${PRINCIPAL_LAST} ${HEAD}`);
    });

    test("principalLast is the greatest orderKey of the principal's rows in the queue, claimable or not", async (store) => {
      await insert(
        store,
        buildMessageRow({ orderKey: 2 }),
        buildMessageRow({ orderKey: 7.5, dueAt: NOW + 60_000 }),
        buildMessageRow({ orderKey: 5, leaseOwner: 'w', leaseUntil: NOW + 60_000 }),
        buildMessageRow({ orderKey: 50, record: { principalId: 'principal-b' } }),
        buildMessageRow({ orderKey: 60, queue: 0 }),
        buildMessageRow({ orderKey: 70, queue: null }),
      );
      assert.equal((await store.queueEnds(1, 'principal-a', NOW)).principalLast, 7.5, PRINCIPAL_LAST);
      assert.equal((await store.queueEnds(1, 'principal-b', NOW)).principalLast, 50, PRINCIPAL_LAST);
      assert.equal((await store.queueEnds(0, 'principal-a', NOW)).principalLast, 60, PRINCIPAL_LAST);
      assert.equal((await store.queueEnds(1, 'principal-c', NOW)).principalLast, null, PRINCIPAL_LAST);
    });

    test('head is the smallest orderKey a claim could take now, of any principal', async (store) => {
      await insert(
        store,
        buildMessageRow({ orderKey: 1, dueAt: NOW + 1 }),
        buildMessageRow({ orderKey: 1.5, leaseOwner: 'w', leaseUntil: NOW + 1 }),
        buildMessageRow({ orderKey: 2, record: { validUntil: NOW } }),
        buildMessageRow({ orderKey: 0.5, queue: 0 }),
        buildMessageRow({ orderKey: 0.25, queue: null }),
        buildMessageRow({ orderKey: 4, record: { principalId: 'principal-b' } }),
        buildMessageRow({ orderKey: 3, record: { principalId: 'principal-b' }, leaseOwner: 'w', leaseUntil: NOW }),
      );
      assert.equal((await store.queueEnds(1, 'principal-a', NOW)).head, 3, `rows not due, leased or no longer valid are not the head; a lease ending at now is over ${HEAD}`);
      assert.equal((await store.queueEnds(0, 'principal-b', NOW)).head, 0.5, HEAD);
    });

    test('head is the greatest orderKey in the queue when a claim could take none', async (store) => {
      await insert(
        store,
        buildMessageRow({ orderKey: 1, dueAt: NOW + 1 }),
        buildMessageRow({ orderKey: 8, leaseOwner: 'w', leaseUntil: NOW + 1, record: { principalId: 'principal-b' } }),
        buildMessageRow({ orderKey: 6, record: { validUntil: NOW - 1 } }),
        buildMessageRow({ orderKey: 2, queue: 0 }),
        buildMessageRow({ orderKey: 20, queue: null }),
      );
      assert.equal((await store.queueEnds(1, 'principal-a', NOW)).head, 8, HEAD);
    });
  });

  describe('countQueued', () => {
    test('counts the rows in the submit queue by class, with the oldest sendAt ?? createdAt, for all or one principal', async (store, skip) => {
      if (store.countQueued === undefined) {
        skip('the record store has no countQueued (optional)');
        return;
      }
      assert.deepEqual(await store.countQueued(), { transactional: 0, bulk: 0, oldestAcceptedAt: null }, `an empty queue ${COUNT}`);
      await insert(
        store,
        buildMessageRow({ queue: 0, record: { createdAt: T0 + 50 } }),
        buildMessageRow({ queue: 0, record: { createdAt: T0 + 10, principalId: 'principal-b' }, leaseOwner: 'w', leaseUntil: NOW + 1 }),
        buildMessageRow({ queue: 1, record: { createdAt: T0 - 100, sendAt: T0 + 30 }, dueAt: NOW + 60_000 }),
        buildMessageRow({ queue: 1, record: { createdAt: T0 + 40 } }),
        buildMessageRow({ queue: 1, record: { createdAt: T0 + 20, principalId: 'principal-b' } }),
        buildMessageRow({ queue: null, record: { createdAt: T0 - 1_000 } }),
      );
      assert.deepEqual(await store.countQueued(), { transactional: 2, bulk: 3, oldestAcceptedAt: T0 + 10 }, `every principal's ${COUNT}`);
      assert.deepEqual(await store.countQueued('principal-a'), { transactional: 1, bulk: 2, oldestAcceptedAt: T0 + 30 }, `principal-a's ${COUNT}`);
      assert.deepEqual(await store.countQueued('principal-b'), { transactional: 1, bulk: 1, oldestAcceptedAt: T0 + 10 }, `principal-b's ${COUNT}`);
      assert.deepEqual(await store.countQueued('principal-c'), { transactional: 0, bulk: 0, oldestAcceptedAt: null }, `a principal with nothing queued ${COUNT}`);
    });
  });
}

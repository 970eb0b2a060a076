/**
 * The storage contract suite's tests of one topic. Counting the queue (see
 * `Storage.countQueued`): the messages accepted and not yet submitted nor ended, leased ones
 * and ones waiting for a retry included, by class, with the oldest one's acceptance time, for
 * everyone or for one principal. Kept as a topic of its own because the backlog bounds and
 * the queue gauges read it: a message counted twice or never refuses sends or hides a
 * backlog. The method is optional: on an adapter without it every case is skipped, saying
 * why.
 */
import assert from 'node:assert/strict';
import type { NewMessage, QueueCount, Storage } from '../../storage/contract.js';
import type { SuiteContext } from './context.js';
import { buildNewMessage, buildNewMessages, FAILED, LEASE, receipt, T0 } from './fixtures.js';

/** Why a case is skipped on an adapter without the method. */
const ABSENT = 'the adapter has no countQueued (optional: its backlog bounds and queue gauges are off)';

/** A count, as the cases write the ones they expect. */
function counted(transactional: number, bulk: number, oldestAcceptedAt: number | null): QueueCount {
  return { transactional, bulk, oldestAcceptedAt };
}

/** The count for everyone (no argument) or for one principal. */
type Count = (principalId?: string) => Promise<QueueCount>;

/** Registers the tests of this topic (see the module comment). */
export function queueCountTests({ describe, test, insert, submitAll }: SuiteContext): void {
  /** A case, given the storage's `countQueued`; skipped when the storage has none. */
  function counting(name: string, fn: (storage: Storage, count: Count) => Promise<void>): void {
    test(name, async (storage, skip) => {
      const countQueued = storage.countQueued?.bind(storage);
      if (countQueued === undefined) {
        skip(ABSENT);
        return;
      }
      await fn(storage, (principalId) => (principalId === undefined ? countQueued() : countQueued(principalId)));
    });
  }

  /** Claims up to `limit` at `now` and returns the refs claimed. */
  async function claim(storage: Storage, limit: number, now = T0 + 1_000): Promise<string[]> {
    const claimed = await storage.claimMessages({ owner: 'worker', limit, leaseMs: LEASE, now });
    return claimed.map((record) => record.ref);
  }

  describe('countQueued (optional: each case is skipped, saying why, on an adapter without it)', () => {
    counting('counts zero, with no oldest, when nothing is queued, for everyone and for any principal', async (_storage, count) => {
      assert.deepEqual(await count(), counted(0, 0, null));
      assert.deepEqual(await count('key-a'), counted(0, 0, null));
    });

    counting('counts queued messages by class, for everyone and per principal', async (storage, count) => {
      await insert(storage, ...buildNewMessages(3, { principalId: 'key-a', priority: 'bulk', createdAt: T0 + 10 }));
      // One request may hold both classes.
      await insert(
        storage,
        buildNewMessage({ principalId: 'key-a', priority: 'transactional', createdAt: T0 + 20 }),
        buildNewMessage({ principalId: 'key-a', priority: 'bulk', createdAt: T0 + 20 }),
        buildNewMessage({ principalId: 'key-a', priority: 'transactional', createdAt: T0 + 20 }),
      );
      await insert(storage, buildNewMessage({ principalId: 'key-b', priority: 'bulk', createdAt: T0 + 5 }));
      await insert(storage, ...buildNewMessages(4, { principalId: 'key-b', priority: 'transactional', createdAt: T0 + 30 }));
      assert.deepEqual(await count(), counted(6, 5, T0 + 5));
      assert.deepEqual(await count('key-a'), counted(2, 4, T0 + 10));
      assert.deepEqual(await count('key-b'), counted(4, 1, T0 + 5));
      assert.deepEqual(await count('key-c'), counted(0, 0, null), 'a principal with nothing queued');
    });

    counting('a claimed message, and one stored leased, still count until submitted', async (storage, count) => {
      const [first] = await insert(storage, ...buildNewMessages(2, { principalId: 'key-a' }));
      assert.deepEqual(await claim(storage, 1), [first!.ref]);
      assert.deepEqual(await count(), counted(0, 2, T0));
      await storage.insertMessages([buildNewMessage({ principalId: 'key-b', priority: 'transactional', createdAt: T0 + 1 })], {
        owner: 'accepting',
        until: T0 + LEASE,
      });
      assert.deepEqual(await count(), counted(1, 2, T0));
      assert.deepEqual(await count('key-b'), counted(1, 0, T0 + 1));
      assert.deepEqual(await count('key-a'), counted(0, 2, T0));
      // The leases end unused (crashed owners) and everything is claimed again: still counted once.
      assert.equal((await claim(storage, 10, T0 + 10 * LEASE)).length, 3);
      assert.deepEqual(await count(), counted(1, 2, T0));
    });

    counting('a message given back for a retry still counts, due or not', async (storage, count) => {
      const [message] = await insert(storage, buildNewMessage({ principalId: 'key-a', createdAt: T0 + 3 }));
      await claim(storage, 1);
      await storage.reschedule(message!.ref, T0 + 60_000, 'carrier busy', T0 + 1_001);
      assert.deepEqual(await count(), counted(0, 1, T0 + 3));
      assert.deepEqual(await count('key-a'), counted(0, 1, T0 + 3));
      assert.deepEqual(await claim(storage, 1, T0 + 60_000), [message!.ref]);
      assert.deepEqual(await count(), counted(0, 1, T0 + 3));
    });

    counting('a message leaves the count once every part is submitted, not before', async (storage, count) => {
      const [long, short] = await insert(
        storage,
        buildNewMessage({ principalId: 'key-a', priority: 'transactional', smsCount: 2 }),
        buildNewMessage({ principalId: 'key-a', priority: 'transactional', createdAt: T0 + 1 }),
      );
      await claim(storage, 2);
      await storage.recordSubmission(long!.ref, 0, `${long!.ref}-c0`, T0 + 1_010);
      assert.deepEqual(await count(), counted(2, 0, T0), 'one part of two submitted: still queued');
      await storage.recordSubmission(long!.ref, 1, `${long!.ref}-c1`, T0 + 1_011);
      assert.deepEqual(await count(), counted(1, 0, T0 + 1));
      await submitAll(storage, short!, T0 + 1_012);
      assert.deepEqual(await count(), counted(0, 0, null));
      assert.deepEqual(await count('key-a'), counted(0, 0, null));
      // Its receipt ends it: it was not counted, and is not counted again.
      await storage.applyReceipt(receipt(`${short!.ref}-c0`, undefined, T0 + 2_000));
      assert.deepEqual(await count(), counted(0, 0, null));
    });

    counting('a message ended by finish leaves the count, leased or not; one expired after submission is not counted again', async (storage, count) => {
      const [unclaimed, claimed, submitted] = await insert(storage, ...buildNewMessages(3, { principalId: 'key-a' }));
      await storage.finish(unclaimed!.ref, FAILED, T0 + 5);
      assert.deepEqual(await count(), counted(0, 2, T0));
      assert.deepEqual(await claim(storage, 1), [claimed!.ref]);
      await storage.finish(claimed!.ref, FAILED, T0 + 1_001);
      assert.deepEqual(await count(), counted(0, 1, T0));
      await submitAll(storage, submitted!, T0 + 1_002);
      assert.deepEqual(await count(), counted(0, 0, null));
      const expired = await storage.expireOverdue(T0 + 5_000, 10, FAILED, T0 + 5_000);
      assert.deepEqual(expired.map((t) => t.message.ref), [submitted!.ref]);
      assert.deepEqual(await count(), counted(0, 0, null));
      assert.deepEqual(await count('key-a'), counted(0, 0, null));
    });

    counting('the oldest accepted time is the oldest queued message\'s, whatever the order of storing, and moves on when it leaves', async (storage, count) => {
      // Stored in this order, accepted by clocks that disagree (two instances).
      const a1 = buildNewMessage({ principalId: 'key-a', priority: 'bulk', createdAt: T0 + 100 });
      const b1 = buildNewMessage({ principalId: 'key-b', priority: 'transactional', createdAt: T0 + 50 });
      const a2 = buildNewMessage({ principalId: 'key-a', priority: 'transactional', createdAt: T0 + 200 });
      const b2 = buildNewMessage({ principalId: 'key-b', priority: 'bulk', createdAt: T0 + 150 });
      for (const message of [a1, b1, a2, b2]) await insert(storage, message);
      assert.equal((await count()).oldestAcceptedAt, T0 + 50);
      assert.equal((await count('key-a')).oldestAcceptedAt, T0 + 100);
      assert.equal((await count('key-b')).oldestAcceptedAt, T0 + 50);
      await submitAll(storage, b1, T0 + 1_000);
      assert.deepEqual(await count(), counted(1, 2, T0 + 100));
      assert.deepEqual(await count('key-b'), counted(0, 1, T0 + 150));
      // A younger one leaving changes nothing.
      await storage.finish(a2.ref, FAILED, T0 + 1_001);
      assert.deepEqual(await count(), counted(0, 2, T0 + 100));
      assert.deepEqual(await count('key-a'), counted(0, 1, T0 + 100));
      await submitAll(storage, a1, T0 + 1_002);
      assert.deepEqual(await count(), counted(0, 1, T0 + 150));
      assert.deepEqual(await count('key-a'), counted(0, 0, null));
      await submitAll(storage, b2, T0 + 1_003);
      assert.deepEqual(await count(), counted(0, 0, null));
    });

    counting('stays exact while a backlog over several principals drains through claims, retries, submissions and endings', async (storage, count) => {
      interface Queued {
        message: NewMessage;
        queued: boolean;
      }
      const all: Queued[] = [];
      for (const [i, principalId] of ['key-a', 'key-b', 'key-c'].entries()) {
        for (const priority of ['bulk', 'transactional'] as const) {
          const messages = buildNewMessages(6 + i, { principalId, priority, createdAt: T0 + 10 * all.length });
          await insert(storage, ...messages);
          all.push(...messages.map((message) => ({ message, queued: true })));
        }
      }
      const expected = (principalId?: string): QueueCount => {
        const queued = all.filter((q) => q.queued && (principalId === undefined || q.message.principalId === principalId));
        const oldest = queued.length === 0 ? null : Math.min(...queued.map((q) => q.message.createdAt));
        return counted(queued.filter((q) => q.message.priority === 'transactional').length, queued.filter((q) => q.message.priority === 'bulk').length, oldest);
      };
      const byRef = new Map(all.map((q) => [q.message.ref, q]));
      let now = T0 + 1_000;
      for (let round = 0; all.some((q) => q.queued); round++) {
        assert.ok(round < 100, 'the backlog drains');
        now += LEASE;
        const refs = await claim(storage, 4, now);
        for (const [i, ref] of refs.entries()) {
          const q = byRef.get(ref)!;
          // By turns: submitted, given back for a retry, ended, left to its lease.
          const fate = (round + i) % 4;
          if (fate === 0) await submitAll(storage, q.message, now);
          else if (fate === 1) await storage.reschedule(ref, now + LEASE / 2, 'carrier busy', now);
          else if (fate === 2) await storage.finish(ref, FAILED, now);
          q.queued = fate === 1 || fate === 3;
        }
        assert.deepEqual(await count(), expected(), `after round ${round}`);
        for (const principalId of ['key-a', 'key-b', 'key-c']) {
          assert.deepEqual(await count(principalId), expected(principalId), `${principalId} after round ${round}`);
        }
      }
      assert.deepEqual(await count(), counted(0, 0, null));
    });
  });
}

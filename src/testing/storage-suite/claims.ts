/**
 * The storage contract suite's tests of one topic. Claiming messages for the submit
 * worker: only due, queued, unleased messages, in fair order (a topic of its own),
 * at most the limit, under a
 * lease that keeps every other claimer out until it ends, including leases taken at
 * insert. Kept as a topic of its own because a claim is where two workers (or two
 * instances) could both take a message, so its rules are the ones a broken adapter breaks
 * first.
 */
import assert from 'node:assert/strict';
import type { SuiteContext } from './context.js';
import { buildNewMessage, DELIVERED, FAILED, LEASE, RACE_ROUNDS, receipt, refsOf, T0, withoutTimes } from './fixtures.js';

/** Registers the tests of this topic (see the module comment). */
export function claimTests({ describe, test, insert, submitAll }: SuiteContext): void {
  describe('claimMessages', () => {
    test("claims only messages that are due: a new message's first due time is its createdAt", async (storage) => {
      const now = buildNewMessage({ createdAt: T0 });
      const later = buildNewMessage({ createdAt: T0 + 1_000 });
      await insert(storage, now, later);
      const first = await storage.claimMessages({ owner: 'w1', limit: 10, leaseMs: LEASE, now: T0 });
      assert.deepEqual(refsOf(first), [now.ref], 'a message is due from its createdAt (rule: a new message is first due at its createdAt, not at the time it was stored)');
      assert.deepEqual(await storage.claimMessages({ owner: 'w1', limit: 10, leaseMs: LEASE, now: T0 + 999 }), [], 'not before its createdAt');
      const second = await storage.claimMessages({ owner: 'w1', limit: 10, leaseMs: LEASE, now: T0 + 1_000 });
      assert.deepEqual(refsOf(second), [later.ref]);
    });

    test("claims one principal's messages in the order they were accepted, at most limit at a time", async (storage) => {
      const a1 = buildNewMessage({ createdAt: T0 });
      const a2 = buildNewMessage({ createdAt: T0 });
      const a3 = buildNewMessage({ createdAt: T0 });
      const b = buildNewMessage({ createdAt: T0 + 10 });
      const c = buildNewMessage({ createdAt: T0 + 20 });
      await insert(storage, a1, a2, a3);
      await insert(storage, b);
      await insert(storage, c);
      const claimed = await storage.claimMessages({ owner: 'w', limit: 3, leaseMs: LEASE, now: T0 + 100 });
      assert.deepEqual(refsOf(claimed), [a1.ref, a2.ref, a3.ref]);
      const rest = await storage.claimMessages({ owner: 'w', limit: 3, leaseMs: LEASE, now: T0 + 100 });
      assert.deepEqual(refsOf(rest), [b.ref, c.ref]);
      assert.deepEqual(await storage.claimMessages({ owner: 'w', limit: 3, leaseMs: LEASE, now: T0 + 100 }), []);
    });

    test('a live lease excludes another claimer; an expired one lets another owner re-claim', async (storage) => {
      const [message] = await insert(storage, buildNewMessage());
      const first = await storage.claimMessages({ owner: 'w1', limit: 10, leaseMs: LEASE, now: T0 });
      assert.deepEqual(refsOf(first), [message!.ref]);
      assert.equal(first[0]!.state, 'queued');
      const during = await storage.claimMessages({ owner: 'w2', limit: 10, leaseMs: LEASE, now: T0 + LEASE - 1 });
      assert.deepEqual(during, []);
      const after = await storage.claimMessages({ owner: 'w2', limit: 10, leaseMs: LEASE, now: T0 + LEASE + 1 });
      assert.deepEqual(refsOf(after), [message!.ref]);
      const third = await storage.claimMessages({ owner: 'w1', limit: 10, leaseMs: LEASE, now: T0 + LEASE + 2 });
      assert.deepEqual(third, []);
    });

    test(`messages stored under a lease are claimed by no one until it ends, then like any other (${RACE_ROUNDS} rounds)`, async (storage) => {
      for (let round = 0; round < RACE_ROUNDS; round++) {
        const base = T0 + round * 4 * LEASE;
        const leased = [buildNewMessage({ createdAt: base }), buildNewMessage({ createdAt: base })];
        const free = buildNewMessage({ createdAt: base + 1 });
        // Two requests in the same turn, one leased and one not: adapters that write the
        // inserts of a turn together keep each one's lease to its own messages.
        await Promise.all([
          storage.insertMessages(leased, { owner: 'accepting', until: base + LEASE }),
          storage.insertMessages([free]),
        ]);
        const rule = `round ${round} (rule: messages stored with a lease are claimed by no one until it ends, also when stored at once with others)`;
        const during = await storage.claimMessages({ owner: 'other', limit: 10, leaseMs: LEASE, now: base + 10 });
        assert.deepEqual(refsOf(during), [free.ref], rule);
        assert.deepEqual(await storage.claimMessages({ owner: 'other', limit: 10, leaseMs: LEASE, now: base + LEASE - 1 }), [], rule);
        const after = await storage.claimMessages({ owner: 'other', limit: 10, leaseMs: LEASE, now: base + LEASE });
        assert.deepEqual(refsOf(after), refsOf(leased), rule);
        // Out of the queue, so the next round's claims see only its own messages.
        for (const message of [...leased, free]) await storage.recordSubmission(message.ref, 0, `${message.ref}-c0`, base + LEASE);
      }
    });

    test('the owner of a lease taken at insert submits and ends the message as if it had claimed it', async (storage) => {
      const message = buildNewMessage({ createdAt: T0 });
      await storage.insertMessages([message], { owner: 'accepting', until: T0 + LEASE });
      const submitted = await storage.recordSubmission(message.ref, 0, 'leased-at-insert', T0 + 5);
      assert.equal(submitted.kind, 'submitted');
      assert.equal(submitted.kind === 'submitted' && submitted.transition.message.parts[0]!.carrierId, 'leased-at-insert');
      const delivered = await storage.applyReceipt(receipt('leased-at-insert', DELIVERED, T0 + 6));
      assert.equal(delivered.kind === 'terminal' && delivered.transition.message.state, 'delivered');
      // Submitted, the message is no longer queued: the ended lease brings no claim.
      assert.deepEqual(await storage.claimMessages({ owner: 'other', limit: 10, leaseMs: LEASE, now: T0 + 2 * LEASE }), []);
    });

    test('claimed messages come with their parts, submitted ones included', async (storage) => {
      const [message] = await insert(storage, buildNewMessage({ smsCount: 3 }));
      await storage.claimMessages({ owner: 'w1', limit: 1, leaseMs: LEASE, now: T0 });
      assert.deepEqual(await storage.recordSubmission(message!.ref, 1, 'carrier-1', T0 + 1), {
        kind: 'part',
        ref: message!.ref,
      });
      const reclaimed = await storage.claimMessages({ owner: 'w2', limit: 1, leaseMs: LEASE, now: T0 + LEASE + 1 });
      assert.equal(reclaimed.length, 1);
      assert.deepEqual(withoutTimes(reclaimed[0]!.parts), [
        { index: 0, carrierId: null, outcome: null },
        { index: 1, carrierId: 'carrier-1', outcome: null },
        { index: 2, carrierId: null, outcome: null },
      ]);
    });

    test('only queued messages are claimed', async (storage) => {
      const submitted = buildNewMessage({ createdAt: T0 });
      const finished = buildNewMessage({ createdAt: T0 + 1 });
      const queued = buildNewMessage({ createdAt: T0 + 2 });
      await insert(storage, submitted, finished, queued);
      await submitAll(storage, submitted);
      await storage.finish(finished.ref, FAILED, T0 + 10);
      const claimed = await storage.claimMessages({ owner: 'w', limit: 10, leaseMs: LEASE, now: T0 + 100 });
      assert.deepEqual(refsOf(claimed), [queued.ref]);
    });

    test(`two concurrent claimers get disjoint sets that cover every free message (${RACE_ROUNDS} rounds)`, async (storage) => {
      for (let round = 0; round < RACE_ROUNDS; round++) {
        // Each round's messages are new; earlier rounds' stay leased (the clock moves less than a lease).
        const now = T0 + 100 + round;
        const messages = Array.from({ length: 30 }, (_, i) => buildNewMessage({ principalId: `p${i % 3}`, createdAt: now - 30 + i }));
        await storage.insertMessages(messages);
        const [a, b] = await Promise.all([
          storage.claimMessages({ owner: 'a', limit: 20, leaseMs: LEASE, now }),
          storage.claimMessages({ owner: 'b', limit: 20, leaseMs: LEASE, now }),
        ]);
        const refsA = refsOf(a);
        const refsB = refsOf(b);
        const overlap = refsA.filter((ref) => refsB.includes(ref));
        assert.deepEqual(overlap, [], `round ${round}: no message may be leased to both claimers`);
        const missed = refsOf(messages).filter((ref) => !refsA.includes(ref) && !refsB.includes(ref));
        assert.deepEqual(
          missed,
          [],
          `round ${round}: claims of 20 and 20 at once took ${refsA.length} and ${refsB.length} of 30 free messages; a claim must not come back short while messages are free because another claim holds locks (rule: a claim takes min(limit, claimable), also under contention)`,
        );
      }
    });
  });
}

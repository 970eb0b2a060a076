/**
 * The record-store contract suite's tests of one topic: `claimMessages`. A claim leases the
 * rows in the submit queue that are due, free and still valid, in the order (queue,
 * orderKey, seq), as many as it may, and returns them as stored after the claim; claims at
 * once get disjoint sets and none comes back short while rows are free. Kept as a topic of
 * its own because a row claimed twice is an SMS sent twice, and a row never claimed is one
 * never sent.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { MessageRow } from '../../storage/record-store.js';
import type { RecordSuiteContext } from './context.js';
import { buildMessageRow, buildMessageRows, LEASE, RACE_ROUNDS, refsOf, T0 } from './fixtures.js';

const CLAIMABLE = '(rule: a claim takes only rows with queue not null, dueAt <= now, leaseUntil null or <= now, and record.validUntil null or > now)';
const ORDER = '(rule: a claim takes rows in the order queue, orderKey, seq, and returns them in that order)';
const AFTER_CLAIM = '(rule: a claim returns each row as stored after it: leaseOwner the claimer, leaseUntil now + leaseMs, version one higher, every other field unchanged)';
const HOW_MANY = '(rule: a claim takes min(limit, claimable) rows)';
const DISJOINT = '(rule: claims at once get disjoint sets, and a claim must not come back short while rows are free)';

const NOW = T0 + 1_000;

/** Registers the tests of this topic (see the module comment). */
export function claimTests({ describe, test, insert, get }: RecordSuiteContext): void {
  describe('claimMessages', () => {
    test('takes only rows in the submit queue, due, free of a live lease and still valid', async (store) => {
      const cases: [string, boolean, MessageRow][] = [
        ['queued, due, never leased', true, buildMessageRow({ dueAt: NOW - 1 })],
        ['due exactly now', true, buildMessageRow({ dueAt: NOW })],
        ['not in the submit queue (queue null)', false, buildMessageRow({ queue: null })],
        ['due later', false, buildMessageRow({ dueAt: NOW + 1 })],
        ['leased until later', false, buildMessageRow({ leaseOwner: 'other', leaseUntil: NOW + 1 })],
        ['leased until exactly now', true, buildMessageRow({ leaseOwner: 'other', leaseUntil: NOW })],
        ['lease ended earlier', true, buildMessageRow({ leaseOwner: 'other', leaseUntil: NOW - 5_000 })],
        ['valid until exactly now', false, buildMessageRow({ record: { validUntil: NOW } })],
        ['valid until earlier', false, buildMessageRow({ record: { validUntil: NOW - 1 } })],
        ['valid until later', true, buildMessageRow({ record: { validUntil: NOW + 1 } })],
        ['in queue 0', true, buildMessageRow({ queue: 0 })],
      ];
      await insert(store, ...cases.map(([, , row]) => row));
      const claimed = new Set(refsOf(await store.claimMessages({ owner: 'w', limit: 100, leaseMs: LEASE, now: NOW })));
      for (const [name, claimable, row] of cases) {
        assert.equal(claimed.has(row.record.ref), claimable, `a row ${name} was ${claimable ? 'not ' : ''}claimed at now ${CLAIMABLE}`);
      }
    });

    test('takes rows by queue, then orderKey, then seq, and returns them in that order', async (store) => {
      const row = (queue: number, orderKey: number, name: string) => buildMessageRow({ queue, orderKey, record: { text: name } });
      // Inserted out of order; "tie-a" before "tie-b" at one orderKey.
      await insert(store, row(1, 0.5, 'bulk-0.5'), row(0, 3, 'tx-3'), row(1, 2 / 3, 'tie-a'));
      await insert(store, row(0, 1 + 1 / 3, 'tx-1.33'), row(1, 2 / 3, 'tie-b'), row(1, 0.25, 'bulk-0.25'), row(0, 10, 'tx-10'));
      const expected = ['tx-1.33', 'tx-3', 'tx-10', 'bulk-0.25', 'bulk-0.5', 'tie-a', 'tie-b'];
      const taken: string[] = [];
      for (let i = 0; i < 3; i++) {
        const claimed = await store.claimMessages({ owner: 'w', limit: 3, leaseMs: LEASE, now: NOW });
        taken.push(...claimed.map((r) => r.record.text));
        assert.deepEqual(taken, expected.slice(0, taken.length), `claims of 3 took ${taken.join(', ')} ${ORDER}`);
      }
      assert.equal(taken.length, expected.length, HOW_MANY);
    });

    test('returns each row as stored after the claim: leased to the claimer until now + leaseMs, version one higher', async (store) => {
      const [row] = await insert(store, buildMessageRow({ queue: 0, orderKey: 4.25, carrierIds: ['old-c'], leaseOwner: 'crashed', leaseUntil: NOW - 1, book: { reportUid: 'u-1' } }));
      const before = await get(store, row!.record.ref);
      const [claimed] = await store.claimMessages({ owner: 'worker-7', limit: 5, leaseMs: LEASE, now: NOW });
      assert.deepEqual(claimed, { ...before, leaseOwner: 'worker-7', leaseUntil: NOW + LEASE, version: before.version + 1 }, AFTER_CLAIM);
      assert.deepEqual(await get(store, row!.record.ref), claimed, `getMessage after the claim ${AFTER_CLAIM}`);
      assert.deepEqual(await store.claimMessages({ owner: 'worker-8', limit: 5, leaseMs: LEASE, now: NOW + LEASE - 1 }), [], `a leased row is not claimed before its lease ends ${CLAIMABLE}`);
      const [again] = await store.claimMessages({ owner: 'worker-8', limit: 5, leaseMs: LEASE, now: NOW + LEASE });
      assert.equal(again?.leaseOwner, 'worker-8', `a row whose lease ended is claimed again ${CLAIMABLE}`);
      assert.equal(again.version, before.version + 2, AFTER_CLAIM);
    });

    test('takes min(limit, claimable) rows', async (store) => {
      await insert(store, ...buildMessageRows(5));
      assert.equal((await store.claimMessages({ owner: 'w', limit: 3, leaseMs: LEASE, now: NOW })).length, 3, HOW_MANY);
      assert.equal((await store.claimMessages({ owner: 'w', limit: 10, leaseMs: LEASE, now: NOW })).length, 2, HOW_MANY);
      assert.equal((await store.claimMessages({ owner: 'w', limit: 10, leaseMs: LEASE, now: NOW })).length, 0, HOW_MANY);
    });

    test(`claims at once get disjoint sets that cover every free row (${RACE_ROUNDS} rounds of 2 to 4 claims over 50 rows)`, async (store) => {
      for (let round = 0; round < RACE_ROUNDS; round++) {
        // Each round's rows are due at its own time: the rows of the earlier rounds stay leased.
        const now = NOW + round;
        const rows = buildMessageRows(50, { dueAt: now, queue: round % 2 });
        await insert(store, ...rows);
        const claimers = 2 + (round % 3);
        const limit = Math.ceil(50 / claimers) + 3;
        const claims = await Promise.all(Array.from({ length: claimers }, (_, i) => store.claimMessages({ owner: `w-${i}`, limit, leaseMs: LEASE, now })));
        const taken = claims.flatMap((claim) => refsOf(claim));
        assert.equal(new Set(taken).size, taken.length, `round ${round}: a row was claimed twice by ${claimers} claims at once ${DISJOINT}`);
        assert.equal(taken.length, 50, `round ${round}: ${claimers} claims of ${limit} at once took ${claims.map((c) => c.length).join(' + ')} of 50 free rows ${DISJOINT}`);
        for (const [i, claim] of claims.entries()) for (const row of claim) assert.equal(row.leaseOwner, `w-${i}`, `round ${round} ${AFTER_CLAIM}`);
        assert.deepEqual(await store.claimMessages({ owner: 'late', limit: 10, leaseMs: LEASE, now }), [], `round ${round}: a row was left free ${DISJOINT}`);
      }
    });
  });
}

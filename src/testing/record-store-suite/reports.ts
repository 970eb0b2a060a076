/**
 * The record-store contract suite's tests of one topic: `claimReports`, the lane of the
 * delivery reports. A report claim takes the rows whose report is due, earliest first, and
 * leases them by moving their `reportDueAt` to `now + leaseMs`; claims at once get disjoint
 * sets. Kept as a topic of its own because it is a lane apart from the submit queue: a row
 * leased for submission, or out of the queue, still has its report claimed.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { MessageRow } from '../../storage/record-store.js';
import type { RecordSuiteContext } from './context.js';
import { buildMessageRow, buildMessageRows, LEASE, RACE_ROUNDS, refsOf, T0 } from './fixtures.js';

const DUE = '(rule: a report claim takes rows with reportDueAt <= now, earliest reportDueAt first, then seq, at most limit, whatever their queue or submit lease)';
const AFTER_CLAIM = '(rule: a report claim moves reportDueAt to now + leaseMs and returns each row as stored after it: version one higher, every other field unchanged)';
const DISJOINT = '(rule: report claims at once get disjoint sets, and a claim must not come back short while reports are due)';

const NOW = T0 + 1_000;

/** Registers the tests of this topic (see the module comment). */
export function reportTests({ describe, test, insert, get }: RecordSuiteContext): void {
  describe('claimReports', () => {
    test('takes the rows whose report is due, earliest reportDueAt first, then seq', async (store) => {
      const row = (reportDueAt: number | null, name: string, more: Partial<MessageRow> = {}) => buildMessageRow({ reportDueAt, record: { text: name }, ...more });
      await insert(store, row(NOW - 50, 'middle'), row(null, 'none'), row(NOW + 1, 'later'), row(NOW - 100, 'tie-a', { queue: null }));
      await insert(store, row(NOW - 100, 'tie-b', { leaseOwner: 'other', leaseUntil: NOW + LEASE }), row(NOW, 'now'), row(NOW - 200, 'earliest', { timer: 'purge', timerAt: NOW }));
      const first = await store.claimReports({ owner: 'w', limit: 3, leaseMs: LEASE, now: NOW });
      assert.deepEqual(first.map((r) => r.record.text), ['earliest', 'tie-a', 'tie-b'], DUE);
      const rest = await store.claimReports({ owner: 'w', limit: 10, leaseMs: LEASE, now: NOW });
      assert.deepEqual(rest.map((r) => r.record.text), ['middle', 'now'], DUE);
      assert.deepEqual(await store.claimReports({ owner: 'w', limit: 10, leaseMs: LEASE, now: NOW }), [], `claimed reports are leased ${DUE}`);
    });

    test('moves reportDueAt to now + leaseMs, and claims the report again once that passes', async (store) => {
      const [row] = await insert(store, buildMessageRow({ reportDueAt: NOW - 10, leaseOwner: 'submitter', leaseUntil: NOW + 5, queue: null, book: { reportUid: 'uid-1' } }));
      const before = await get(store, row!.record.ref);
      const [claimed] = await store.claimReports({ owner: 'reporter', limit: 5, leaseMs: LEASE, now: NOW });
      assert.deepEqual(claimed, { ...before, reportDueAt: NOW + LEASE, version: before.version + 1 }, AFTER_CLAIM);
      assert.deepEqual(await get(store, row!.record.ref), claimed, `getMessage after the claim ${AFTER_CLAIM}`);
      assert.deepEqual(await store.claimReports({ owner: 'reporter', limit: 5, leaseMs: LEASE, now: NOW + LEASE - 1 }), [], DUE);
      const [again] = await store.claimReports({ owner: 'reporter', limit: 5, leaseMs: 1_000, now: NOW + LEASE });
      assert.equal(again?.reportDueAt, NOW + LEASE + 1_000, AFTER_CLAIM);
      assert.equal(again.version, before.version + 2, AFTER_CLAIM);
    });

    test(`report claims at once get disjoint sets that cover every due report (${RACE_ROUNDS} rounds of 2 to 4 claims over 20 rows)`, async (store) => {
      for (let round = 0; round < RACE_ROUNDS; round++) {
        const now = NOW + round;
        const rows = buildMessageRows(20, { reportDueAt: now, queue: null });
        await insert(store, ...rows);
        const claimers = 2 + (round % 3);
        const limit = Math.ceil(20 / claimers) + 2;
        const claims = await Promise.all(Array.from({ length: claimers }, (_, i) => store.claimReports({ owner: `r-${i}`, limit, leaseMs: LEASE, now })));
        const taken = claims.flatMap((claim) => refsOf(claim));
        assert.equal(new Set(taken).size, taken.length, `round ${round}: a report was claimed twice by ${claimers} claims at once ${DISJOINT}`);
        assert.equal(taken.length, 20, `round ${round}: ${claimers} claims of ${limit} at once took ${claims.map((c) => c.length).join(' + ')} of 20 due reports ${DISJOINT}`);
      }
    });
  });
}

/**
 * The record-store contract suite's tests of one topic: the lookups by the keys the library
 * gives a row beside its ref. `findByExternalId` returns a principal's rows with one external
 * id, newest first; `findByCarrierId` finds the row of the first carrier id in its list that
 * any row has, also an id a later write added. Kept as a topic of its own because these are
 * the reads a client's status query and a carrier's receipt depend on.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { RecordSuiteContext } from './context.js';
import { buildMessageRow, refsOf, T0 } from './fixtures.js';

const BY_EXTERNAL_ID = "(rule: findByExternalId returns the principal's rows with that external id, newest first: record.createdAt descending, then seq descending; at most limit)";
const BY_CARRIER_ID = '(rule: findByCarrierId returns the row having the first id of the list that any row has, or null)';
const WRITTEN_IDS = '(rule: the carrier ids a write adds to a row are found by findByCarrierId from then on, and the earlier ones still are)';
const REUSED_ID = '(rule: when a carrier reuses an id, findByCarrierId finds the row given it last; a later write or a delete of the other row does not change that)';

/** Registers the tests of this topic (see the module comment). */
export function lookupTests({ describe, test, insert, get }: RecordSuiteContext): void {
  describe('findByExternalId', () => {
    test("returns the principal's rows with that external id, newest first (createdAt, then seq), at most limit", async (store) => {
      const at = (createdAt: number, text: string) => buildMessageRow({ record: { externalId: 'order-9', createdAt, text } });
      // Inserted out of time order, two of them at one createdAt: the later insert is newer.
      const [middle, oldest, tieFirst] = await insert(store, at(T0 + 10, 'middle'), at(T0, 'oldest'), at(T0 + 20, 'tie-first'));
      const [tieSecond] = await insert(store, at(T0 + 20, 'tie-second'));
      await insert(store, buildMessageRow({ record: { externalId: 'order-8' } }), buildMessageRow({ record: { externalId: 'order-9', principalId: 'principal-b' } }));
      const expected = refsOf([tieSecond!, tieFirst!, middle!, oldest!]);
      assert.deepEqual(refsOf(await store.findByExternalId('principal-a', 'order-9', 10)), expected, BY_EXTERNAL_ID);
      assert.deepEqual(refsOf(await store.findByExternalId('principal-a', 'order-9', 3)), expected.slice(0, 3), `with limit 3 ${BY_EXTERNAL_ID}`);
      assert.deepEqual(refsOf(await store.findByExternalId('principal-a', 'order-9', 1)), expected.slice(0, 1), `with limit 1 ${BY_EXTERNAL_ID}`);
      assert.deepEqual(await store.findByExternalId('principal-c', 'order-9', 10), [], BY_EXTERNAL_ID);
    });
  });

  describe('findByCarrierId', () => {
    test('finds the row of the first id in the list that any row has', async (store) => {
      const [a, b] = await insert(store, buildMessageRow({ carrierIds: ['a-0', 'a-1'] }), buildMessageRow({ carrierIds: ['b-0'] }));
      assert.equal((await store.findByCarrierId(['a-1']))?.record.ref, a!.record.ref, BY_CARRIER_ID);
      assert.equal((await store.findByCarrierId(['nobody', 'b-0', 'a-0']))?.record.ref, b!.record.ref, `b-0 comes before a-0 in the list ${BY_CARRIER_ID}`);
      assert.equal((await store.findByCarrierId(['a-0', 'b-0']))?.record.ref, a!.record.ref, `a-0 comes before b-0 in the list ${BY_CARRIER_ID}`);
      assert.equal(await store.findByCarrierId(['nobody', 'A-0']), null, BY_CARRIER_ID);
      assert.equal(await store.findByCarrierId([]), null, `an empty list ${BY_CARRIER_ID}`);
    });

    test('finds a row by the carrier ids a later write added, and still by the earlier ones', async (store) => {
      const [row] = await insert(store, buildMessageRow({ record: { smsCount: 2 }, carrierIds: [] }));
      const stored = await get(store, row!.record.ref);
      const first = { ...stored, version: 1, carrierIds: ['late-0'] };
      assert.deepEqual(await store.writeMessages([{ row: first, expectedVersion: 0 }]), [true]);
      assert.equal((await store.findByCarrierId(['late-0']))?.record.ref, row!.record.ref, `an id added by a write to a row inserted with none ${WRITTEN_IDS}`);
      const second = { ...first, version: 2, carrierIds: ['late-0', 'late-1', 'late-0b'] };
      assert.deepEqual(await store.writeMessages([{ row: second, expectedVersion: 1 }]), [true]);
      for (const id of ['late-0', 'late-1', 'late-0b']) {
        const found = await store.findByCarrierId([id]);
        assert.equal(found?.record.ref, row!.record.ref, `${id} ${WRITTEN_IDS}`);
        assert.equal(found.version, 2, `the row found by ${id} is the one stored now ${WRITTEN_IDS}`);
      }
    });

    test('finds the row given a reused id last, whatever is later written to or deleted from the other', async (store) => {
      const [earlier] = await insert(store, buildMessageRow({ carrierIds: ['reused'] }));
      const [later] = await insert(store, buildMessageRow({ carrierIds: [] }));
      const stored = await get(store, later!.record.ref);
      assert.deepEqual(await store.writeMessages([{ row: { ...stored, version: 1, carrierIds: ['reused'] }, expectedVersion: 0 }]), [true]);
      assert.equal((await store.findByCarrierId(['reused']))?.record.ref, later!.record.ref, `after a write gave it to a later row ${REUSED_ID}`);
      const old = await get(store, earlier!.record.ref);
      assert.deepEqual(await store.writeMessages([{ row: { ...old, version: 1, record: { ...old.record, text: 'changed' } }, expectedVersion: 0 }]), [true]);
      assert.equal((await store.findByCarrierId(['reused']))?.record.ref, later!.record.ref, `after a write to the earlier row ${REUSED_ID}`);
      assert.equal(await store.deleteMessages([earlier!.record.ref]), 1);
      assert.equal((await store.findByCarrierId(['reused']))?.record.ref, later!.record.ref, `after the earlier row was deleted ${REUSED_ID}`);
    });
  });
}

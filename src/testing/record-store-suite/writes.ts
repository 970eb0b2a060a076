/**
 * The record-store contract suite's tests of one topic: how rows change and go.
 * `writeMessages` is a compare-and-set on the version: a write is applied only while the
 * stored row is at the version the library read, with its refund in the same step, and of
 * writers racing at one version exactly one wins; `deleteMessages` removes rows with what is
 * kept for them. Kept as a topic of its own because every rule of the library rests on it: a
 * write applied over another's loses a state change, or refunds a message twice.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { MessageRow, MessageWrite } from '../../storage/record-store.js';
import type { RecordSuiteContext } from './context.js';
import { buildMessageRow, RACE_ROUNDS, T0 } from './fixtures.js';

const CAS = '(rule: writeMessages applies a write only while the stored row is at expectedVersion, and returns per write, in order, whether it was applied)';
const REFUND = "(rule: a write's refund is added to the row's principal's balance in the same atomic step as the write, and only when the write is applied)";
const RACE = '(rule: of writes racing at one version exactly one is applied)';
const DELETE = '(rule: deleteMessages deletes the rows of the refs given, with their carrier ids, and returns how many it deleted)';

/** `row` as the next version, with `changes` to its record. */
function next(row: MessageRow, changes: Partial<MessageRow['record']> = {}, more: Partial<MessageRow> = {}): MessageRow {
  return { ...row, record: { ...row.record, ...changes }, version: row.version + 1, ...more };
}

/** Registers the tests of this topic (see the module comment). */
export function writeTests({ describe, test, insert, get }: RecordSuiteContext): void {
  describe('writeMessages', () => {
    test('applies a write at the stored version, and refuses one at any other', async (store) => {
      const [row] = await insert(store, buildMessageRow());
      const stored = await get(store, row!.record.ref);
      const first = next(stored, { state: 'submitted', updatedAt: T0 + 5 }, { queue: null, timer: 'receipt', timerAt: T0 + 5 });
      assert.deepEqual(await store.writeMessages([{ row: first, expectedVersion: 0 }]), [true], CAS);
      assert.deepEqual(await get(store, row!.record.ref), first, `the stored row is the written one ${CAS}`);
      for (const stale of [0, 2, 7]) {
        const write = next({ ...first, version: stale }, { state: 'failed' });
        assert.deepEqual(await store.writeMessages([{ row: write, expectedVersion: stale }]), [false], `a write expecting version ${stale} of a row at 1 ${CAS}`);
      }
      assert.deepEqual(await get(store, row!.record.ref), first, `a refused write changed the row ${CAS}`);
      const second = next(first, { state: 'delivered' });
      assert.deepEqual(await store.writeMessages([{ row: second, expectedVersion: 1 }]), [true], CAS);
      assert.equal((await get(store, row!.record.ref)).version, 2, CAS);
    });

    test('returns one answer per write, in order, applying the others when some are refused', async (store) => {
      const [a, b, c] = await insert(store, buildMessageRow(), buildMessageRow(), buildMessageRow());
      const unknown = buildMessageRow();
      const writes: MessageWrite[] = [
        { row: next(a!, { text: 'a1' }), expectedVersion: 0 },
        { row: next({ ...b!, version: 3 }, { text: 'b-stale' }), expectedVersion: 3 },
        { row: next(unknown, { text: 'unknown' }), expectedVersion: 0 },
        { row: next(c!, { text: 'c1' }), expectedVersion: 0 },
      ];
      assert.deepEqual(await store.writeMessages(writes), [true, false, false, true], CAS);
      assert.equal((await get(store, a!.record.ref)).record.text, 'a1', CAS);
      assert.equal((await get(store, b!.record.ref)).record.text, 'Hello', CAS);
      assert.equal(await store.getMessage(unknown.record.ref), null, `a write of a ref not stored inserts nothing ${CAS}`);
      assert.equal((await get(store, c!.record.ref)).record.text, 'c1', CAS);
    });

    test("adds a write's refund to the principal's balance, only when the write is applied", async (store) => {
      await store.addCredit('principal-a', 3);
      const [row, other] = await insert(store, buildMessageRow(), buildMessageRow({ record: { principalId: 'principal-b' } }));
      const ended = next(row!, { state: 'rejected' });
      assert.deepEqual(await store.writeMessages([{ row: ended, expectedVersion: 0, refund: 2 }]), [true], REFUND);
      assert.equal(await store.creditBalance('principal-a'), 5, REFUND);
      assert.deepEqual(await store.writeMessages([{ row: next(row!, { state: 'failed' }), expectedVersion: 0, refund: 2 }]), [false], REFUND);
      assert.equal(await store.creditBalance('principal-a'), 5, `a refused write refunded ${REFUND}`);
      assert.deepEqual(await store.writeMessages([{ row: next(other!, { state: 'cancelled' }), expectedVersion: 0, refund: 4 }]), [true], REFUND);
      assert.equal(await store.creditBalance('principal-b'), 4, `a principal with no balance gets one ${REFUND}`);
      assert.equal(await store.creditBalance('principal-a'), 5, `the refund goes to the row's principal ${REFUND}`);
    });

    test(`of writes racing at one version exactly one is applied, with its refund (${RACE_ROUNDS} rounds of 2 to 4 writers)`, async (store) => {
      for (let round = 0; round < RACE_ROUNDS; round++) {
        const principalId = `racer-${round}`;
        const [row] = await insert(store, buildMessageRow({ record: { principalId } }));
        const writers = 2 + (round % 3);
        const results = await Promise.all(
          Array.from({ length: writers }, (_, i) => store.writeMessages([{ row: next(row!, { text: `writer-${i}` }), expectedVersion: 0, refund: 1 }])),
        );
        const winners = results.flatMap((result, i) => (result[0] === true ? [i] : []));
        assert.equal(winners.length, 1, `round ${round}: ${writers} writes at version 0 at once, ${winners.length} applied ${RACE}`);
        const stored = await get(store, row!.record.ref);
        assert.equal(stored.record.text, `writer-${winners[0]}`, `round ${round}: the stored row is not the applied write's ${RACE}`);
        assert.equal(stored.version, 1, `round ${round} ${RACE}`);
        assert.equal(await store.creditBalance(principalId), 1, `round ${round}: refunds of racing writes ${REFUND} ${RACE}`);
      }
    });
  });

  describe('deleteMessages', () => {
    test('deletes the rows of the refs with their carrier ids, and returns how many', async (store) => {
      const [a, b, kept] = await insert(store, buildMessageRow({ carrierIds: ['a-0'] }), buildMessageRow({ carrierIds: ['b-0'] }), buildMessageRow({ carrierIds: ['k-0'] }));
      const stored = await get(store, b!.record.ref);
      await store.writeMessages([{ row: next(stored, {}, { carrierIds: ['b-0', 'b-1'] }), expectedVersion: 0 }]);
      assert.equal(await store.deleteMessages([a!.record.ref, b!.record.ref, 'no-such-ref']), 2, DELETE);
      for (const row of [a!, b!]) assert.equal(await store.getMessage(row.record.ref), null, DELETE);
      for (const id of ['a-0', 'b-0', 'b-1']) assert.equal(await store.findByCarrierId([id]), null, `carrier id ${id} of a deleted row still finds it ${DELETE}`);
      assert.equal((await store.findByCarrierId(['k-0']))?.record.ref, kept!.record.ref, DELETE);
      assert.equal(await store.deleteMessages([a!.record.ref]), 0, `deleting again ${DELETE}`);
      assert.equal(await store.deleteMessages([]), 0, DELETE);
    });

    test('a deleted ref and its carrier ids may be used again', async (store) => {
      const [row] = await insert(store, buildMessageRow({ carrierIds: ['reused-0'] }));
      await store.deleteMessages([row!.record.ref]);
      const again = buildMessageRow({ record: { ref: row!.record.ref, text: 'again' }, carrierIds: ['reused-0'] });
      assert.equal(await store.insertMessages([again]), undefined, DELETE);
      assert.equal((await store.findByCarrierId(['reused-0']))?.record.text, 'again', DELETE);
    });
  });
}

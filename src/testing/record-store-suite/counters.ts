/**
 * The record-store contract suite's tests of one topic: the counters of an insert's guard
 * (`InsertGuard.counters`, what spend caps count with). Each counter grows by its units with
 * the rows, unless one would pass its limit: then nothing is stored, no counter changes, and
 * the refusal names it; racing inserts never take a counter past its limit. Skipped for a
 * store without the optional `countedUnits`.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { CounterGuard, RecordStore } from '../../storage/record-store.js';
import type { RecordSuiteContext } from './context.js';
import { buildMessageRow, buildMessageRows, RACE_ROUNDS } from './fixtures.js';

const ADD = '(rule: an insert guarded by counters stores its rows and adds each counter\'s units, answering { counted } with the new values in order, when none would pass its limit; otherwise it returns { refused: "limit-reached", counter } naming one that would, and stores and adds nothing)';
const ATOMIC = '(rule: the counters\' check, their addition and the insert are one atomic step)';

const counter = (period: string, units: number, limit: number, principalId = 'principal-a'): CounterGuard => ({ principalId, period, units, limit });

/** Registers the tests of this topic (see the module comment). */
export function counterTests({ describe, test, get }: RecordSuiteContext): void {
  const counting = (name: string, fn: (store: RecordStore & Required<Pick<RecordStore, 'countedUnits'>>) => Promise<void>): void =>
    test(name, async (store, skip) => {
      if (store.countedUnits === undefined) {
        skip('the record store has no countedUnits (optional)');
        return;
      }
      await fn(store as RecordStore & Required<Pick<RecordStore, 'countedUnits'>>);
    });

  describe('counters', () => {
    counting('counters grow with the rows, up to exactly their limit, and the insert answers their new values', async (store) => {
      assert.equal(await store.countedUnits('principal-a', 'day:1'), 0, ADD);
      const rows = buildMessageRows(2);
      assert.deepEqual(await store.insertMessages(rows, { counters: [counter('month:1', 3, 10), counter('day:1', 3, 3)] }), { counted: [3, 3] }, ADD);
      for (const row of rows) await get(store, row.record.ref);
      assert.equal(await store.countedUnits('principal-a', 'month:1'), 3, ADD);
      assert.equal(await store.countedUnits('principal-b', 'month:1'), 0, `another principal's counter is its own ${ADD}`);
    });

    counting('a counter that would pass its limit refuses the insert: no row, no counter changed', async (store) => {
      await store.insertMessages([buildMessageRow()], { counters: [counter('day:1', 2, 5)] });
      const row = buildMessageRow();
      const refusal = await store.insertMessages([row], { counters: [counter('month:1', 4, 100), counter('day:1', 4, 5)] });
      assert.deepEqual(refusal, { refused: 'limit-reached', counter: 1 }, ADD);
      assert.equal(await store.getMessage(row.record.ref), null, ADD);
      assert.equal(await store.countedUnits('principal-a', 'month:1'), 0, `a counter within its limit is not added to when another refuses ${ADD}`);
      assert.equal(await store.countedUnits('principal-a', 'day:1'), 2, ADD);
    });

    counting(`racing inserts never take a counter past its limit (${RACE_ROUNDS} rounds)`, async (store) => {
      for (let round = 0; round < RACE_ROUNDS; round++) {
        const principalId = `racer-${round}`;
        const answers = await Promise.all(Array.from({ length: 7 }, () => store.insertMessages([buildMessageRow({ record: { principalId } })], { counters: [counter('day:1', 1, 4, principalId)] })));
        const stored = answers.filter((answer) => answer?.refused === undefined).length;
        assert.equal(stored, 4, `round ${round}: 7 inserts of 1 unit raced for a limit of 4 and ${stored} were stored ${ATOMIC}`);
        assert.equal(await store.countedUnits(principalId, 'day:1'), 4, `round ${round} ${ATOMIC}`);
      }
    });
  });
}

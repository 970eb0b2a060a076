/**
 * The record-store contract suite's tests of one topic: `dueMessages`, how the library's
 * sweeps find the rows whose timer has come. Kept as a topic of its own because each timer
 * is a sweep of its own (scheduled messages coming due, validity ending, receipts timing
 * out, retention): a row found by another timer's sweep is ended by the wrong rule.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { Timer } from '../../storage/record-store.js';
import type { RecordSuiteContext } from './context.js';
import { buildMessageRow, T0 } from './fixtures.js';

const DUE = '(rule: dueMessages returns the rows whose timer is the one asked with timerAt <= at, earliest timerAt first, then seq, at most limit)';
const READ_ONLY = '(rule: dueMessages only reads: the rows it returns are stored unchanged)';

const TIMERS: readonly Timer[] = ['scheduled', 'validity', 'receipt', 'purge'];

/** Registers the tests of this topic (see the module comment). */
export function timerTests({ describe, test, insert, get }: RecordSuiteContext): void {
  describe('dueMessages', () => {
    test('returns the rows waiting for that timer whose time has come, earliest first, then seq, at most limit', async (store) => {
      const at = T0 + 1_000;
      for (const timer of TIMERS) {
        const row = (timerAt: number, name: string) => buildMessageRow({ timer, timerAt, record: { text: `${timer}:${name}` } });
        await insert(store, row(at - 10, 'middle'), row(at + 1, 'later'), row(at - 500, 'tie-a'));
        await insert(store, row(at, 'at'), row(at - 500, 'tie-b'), row(at - 900, 'earliest'));
      }
      await insert(store, buildMessageRow({ timer: null, timerAt: null }));
      for (const timer of TIMERS) {
        const names = (rows: { record: { text: string } }[]) => rows.map((r) => r.record.text);
        const expected = ['earliest', 'tie-a', 'tie-b', 'middle', 'at'].map((name) => `${timer}:${name}`);
        assert.deepEqual(names(await store.dueMessages(timer, at, 100)), expected, `${timer} at T0+1000 ${DUE}`);
        assert.deepEqual(names(await store.dueMessages(timer, at, 2)), expected.slice(0, 2), `${timer} with limit 2 ${DUE}`);
        assert.deepEqual(names(await store.dueMessages(timer, at - 901, 100)), [], `${timer} before any is due ${DUE}`);
      }
    });

    test('changes nothing: the rows it returns stay as they were', async (store) => {
      const [row] = await insert(store, buildMessageRow({ timer: 'validity', timerAt: T0, record: { validUntil: T0 } }));
      const before = await get(store, row!.record.ref);
      const [due] = await store.dueMessages('validity', T0, 10);
      assert.deepEqual(due, before, READ_ONLY);
      assert.deepEqual(await get(store, row!.record.ref), before, READ_ONLY);
      assert.equal((await store.dueMessages('validity', T0, 10)).length, 1, `the row is due again ${READ_ONLY}`);
    });
  });
}

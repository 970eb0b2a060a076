/**
 * The record-store contract suite's tests of one topic: the primitives an erase
 * (`sms.erase`, docs/erase.md) and the counters' purge run on, each optional (skipped, saying
 * so, without it). `findByRecipient` finds the rows to one number of every principal, by
 * principal from a given one on; the scans read the report log and the idempotency records a
 * page at a time from a cursor, and the rewrites replace what the library erased;
 * `purgeCounters` deletes the counters whose period is not live.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { RecordSuiteContext } from './context.js';
import { buildMessageRow, idempotencyRecord, refsOf } from './fixtures.js';

const BY_RECIPIENT = "(rule: findByRecipient returns the rows to the number of every principal, by principal id from fromPrincipal on (included), at most limit)";

/** `values` without repeats, in the order each first came; throws when one comes back after another (its rows not together). */
function distinctInOrder(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const value of values) {
    if (out.at(-1) === value) continue;
    assert.ok(!out.includes(value), `${value}'s rows are not together ${BY_RECIPIENT}`);
    out.push(value);
  }
  return out;
}

/** Registers the tests of this topic (see the module comment). */
export function eraseTests({ describe, test, insert }: RecordSuiteContext): void {
  describe('erase primitives', () => {
    test('findByRecipient: the rows to one number of every principal, by principal from fromPrincipal on', async (store, skip) => {
      if (store.findByRecipient === undefined) {
        skip('the store has no findByRecipient');
        return;
      }
      const to = (principalId: string, recipient = '254711000222') => buildMessageRow({ record: { principalId, recipient } });
      const rows = await insert(store, to('principal-b'), to('principal-a'), to('principal-b'), to('principal-c'), to('principal-a', '254799000111'));
      const all = await store.findByRecipient('254711000222', null, 10);
      assert.deepEqual(refsOf(all).sort(), refsOf(rows.slice(0, 4)).sort(), BY_RECIPIENT);
      const groups = distinctInOrder(all.map((row) => row.record.principalId));
      assert.equal(groups.length, 3, `each principal's rows together ${BY_RECIPIENT}`);
      assert.equal((await store.findByRecipient('254711000222', null, 2)).length, 2, `at most limit ${BY_RECIPIENT}`);
      const rest = await store.findByRecipient('254711000222', groups[1]!, 10);
      assert.deepEqual(distinctInOrder(rest.map((row) => row.record.principalId)), groups.slice(1), `from fromPrincipal on, itself included ${BY_RECIPIENT}`);
      assert.deepEqual(await store.findByRecipient('254700000000', null, 10), [], BY_RECIPIENT);
    });

    test('scanIdempotency and rewriteIdempotency: every record a page at a time, a body replaced while its key holds it', async (store, skip) => {
      if (store.scanIdempotency === undefined || store.rewriteIdempotency === undefined) {
        skip('the store has no scanIdempotency and rewriteIdempotency');
        return;
      }
      for (const [principalId, key] of [['principal-b', 'k1'], ['principal-a', 'k2'], ['principal-a', 'k1']] as const) {
        await store.insertMessages([buildMessageRow({ record: { principalId } })], { idempotency: idempotencyRecord(principalId, key) });
      }
      const seen: string[] = [];
      let after: { principalId: string; key: string } | null = null;
      for (let page = 0; page < 10; page++) {
        const records = await store.scanIdempotency(after, 2);
        seen.push(...records.map((record) => `${record.principalId}/${record.key}`));
        if (records.length < 2) break;
        after = { principalId: records.at(-1)!.principalId, key: records.at(-1)!.key };
      }
      assert.deepEqual([...seen].sort(), ['principal-a/k1', 'principal-a/k2', 'principal-b/k1'], '(rule: pages from the cursor read every record once)');
      const record = idempotencyRecord('principal-a', 'k1');
      assert.equal(await store.rewriteIdempotency([{ ...record, body: '[]' }, { ...record, key: 'gone', body: '[]' }]), 1, 'a record no key holds is not rewritten');
      assert.equal((await store.findIdempotency('principal-a', 'k1', record.createdAt + 1))?.body, '[]');
    });

    test('purgeCounters: the counters of periods not live go, up to limit', async (store, skip) => {
      if (store.countedUnits === undefined || store.purgeCounters === undefined) {
        skip('the store has no countedUnits and purgeCounters');
        return;
      }
      for (const period of ['day:1', 'day:2', 'month:1']) {
        await store.insertMessages([buildMessageRow()], { counters: [{ principalId: 'principal-a', period, units: 1, limit: 10 }] });
      }
      assert.equal(await store.purgeCounters(['day:2'], 1), 1, 'at most limit');
      assert.equal(await store.purgeCounters(['day:2'], 10), 1);
      assert.equal(await store.countedUnits('principal-a', 'day:1'), 0);
      assert.equal(await store.countedUnits('principal-a', 'month:1'), 0);
      assert.equal(await store.countedUnits('principal-a', 'day:2'), 1, 'a live period stays');
    });
  });
}

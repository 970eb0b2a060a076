/**
 * The record-store contract suite's tests of one topic: `insertMessages` stores a batch
 * whole or not at all, each row at version 0 with a new, increasing `seq`. Kept as a topic
 * of its own because a half-stored request is a customer's message sent without its answer,
 * or charged without being sent.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { RecordSuiteContext } from './context.js';
import { buildMessageRow, buildMessageRows, idempotencyRecord, refsOf, T0 } from './fixtures.js';

const ALL_OR_NONE = '(rule: insertMessages stores every row or none: a ref already stored or repeated in the batch makes it throw, storing nothing and putting or taking nothing of its guard)';
const SEQ = '(rule: each inserted row gets version 0 and a new seq greater than every seq given before, in batch order; a version or seq given is ignored)';

/** Registers the tests of this topic (see the module comment). */
export function insertTests({ describe, test, insert, get }: RecordSuiteContext): void {
  describe('insertMessages', () => {
    test('stores each row at version 0 with an increasing seq, whatever version and seq it was given', async (store) => {
      const first = buildMessageRows(3, { version: 7, seq: 1_000 });
      const second = buildMessageRows(2, { version: 2, seq: -5 });
      await insert(store, ...first);
      await insert(store, ...second);
      const stored = await Promise.all([...first, ...second].map((row) => get(store, row.record.ref)));
      for (const row of stored) assert.equal(row.version, 0, `${row.record.ref} is stored at version ${row.version} ${SEQ}`);
      const seqs = stored.map((row) => row.seq);
      for (let i = 1; i < seqs.length; i++) {
        assert.ok(seqs[i]! > seqs[i - 1]!, `seqs in insertion order are ${seqs.join(', ')} ${SEQ}`);
      }
    });

    test('a ref already stored makes the whole batch throw, and nothing of it is stored', async (store) => {
      const [stored] = await insert(store, buildMessageRow({ record: { text: 'first' } }));
      const fresh = buildMessageRow();
      const again = buildMessageRow({ record: { ref: stored!.record.ref, text: 'second' } });
      await assert.rejects(store.insertMessages([fresh, again]), `a batch repeating stored ref ${stored!.record.ref} did not throw ${ALL_OR_NONE}`);
      assert.equal(await store.getMessage(fresh.record.ref), null, `the new row of a batch that threw was stored ${ALL_OR_NONE}`);
      assert.equal((await get(store, stored!.record.ref)).record.text, 'first', `the stored row was overwritten ${ALL_OR_NONE}`);
    });

    test('a ref repeated within the batch makes it throw, and nothing of it is stored', async (store) => {
      const row = buildMessageRow();
      const fresh = buildMessageRow();
      const twin = buildMessageRow({ record: { ref: row.record.ref, text: 'twin' } });
      await assert.rejects(store.insertMessages([row, fresh, twin]), `a batch naming ${row.record.ref} twice did not throw ${ALL_OR_NONE}`);
      for (const ref of refsOf([row, fresh])) assert.equal(await store.getMessage(ref), null, `row ${ref} of a batch that threw was stored ${ALL_OR_NONE}`);
    });

    test('a batch that throws puts no idempotency record and takes no credit', async (store) => {
      await store.addCredit('principal-a', 10);
      const [stored] = await insert(store, buildMessageRow());
      const key = idempotencyRecord('principal-a', 'retry-me');
      const fresh = buildMessageRow();
      const guard = { idempotency: key, credit: { principalId: 'principal-a', units: 4 } };
      await assert.rejects(store.insertMessages([fresh, buildMessageRow({ record: { ref: stored!.record.ref } })], guard), ALL_OR_NONE);
      assert.equal(await store.creditBalance('principal-a'), 10, `credit was taken by a batch that threw ${ALL_OR_NONE}`);
      assert.equal(await store.findIdempotency('principal-a', 'retry-me', T0), null, `the idempotency record of a batch that threw was put ${ALL_OR_NONE}`);
      assert.equal(await store.insertMessages([fresh], guard), undefined, `the same request without the duplicate is stored ${ALL_OR_NONE}`);
      assert.equal(await store.creditBalance('principal-a'), 6);
      assert.ok(await store.getMessage(fresh.record.ref));
    });
  });
}

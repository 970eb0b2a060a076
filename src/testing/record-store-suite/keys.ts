/**
 * The record-store contract suite's tests of one topic: keys are compared exactly, case
 * included. Refs, principal ids, external ids, idempotency keys and carrier ids that differ
 * only in case are different keys. Kept as a topic of its own because a database whose
 * default collation ignores case (MySQL and MariaDB's) passes every other test and then
 * finds one customer's message by another's ref spelled in capitals, refuses a new ref as a
 * duplicate, matches a receipt to the wrong message, or replays an answer for a key the
 * client never sent.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { RecordSuiteContext } from './context.js';
import { buildMessageRow, idempotencyRecord, refsOf, T0 } from './fixtures.js';

const RULE = '(rule: refs, principal ids, external ids, idempotency keys and carrier ids are case-sensitive: compare them as bytes, e.g. a binary collation)';

/** Registers the tests of this topic (see the module comment). */
export function keyTests({ describe, test, insert, get }: RecordSuiteContext): void {
  describe('keys are case-sensitive', () => {
    test('refs that differ only in case are two rows, each found, written and deleted by its own spelling only', async (store) => {
      const lower = buildMessageRow({ record: { ref: `ref-case-${T0}-abc`, text: 'lower' } });
      const upper = buildMessageRow({ record: { ref: `REF-CASE-${T0}-ABC`, text: 'upper' } });
      await insert(store, lower);
      await store.insertMessages([upper]).catch((error: unknown) => {
        assert.fail(`storing ref ${upper.record.ref} after ${lower.record.ref} threw (${String(error)}) ${RULE}`);
      });
      assert.equal((await get(store, lower.record.ref)).record.text, 'lower', `${lower.record.ref} ${RULE}`);
      assert.equal((await get(store, upper.record.ref)).record.text, 'upper', `${upper.record.ref} ${RULE}`);
      const third = `Ref-Case-${T0}-abc`;
      assert.equal(await store.getMessage(third), null, `a third spelling names no row ${RULE}`);
      const stray = { ...buildMessageRow({ record: { ref: third, text: 'third' } }), version: 1 };
      assert.deepEqual(await store.writeMessages([{ row: stray, expectedVersion: 0 }]), [false], `a write under a third spelling was applied ${RULE}`);
      assert.equal((await get(store, lower.record.ref)).record.text, 'lower', `a write under a third spelling changed ${lower.record.ref} ${RULE}`);
      assert.equal(await store.deleteMessages([third]), 0, `a delete under a third spelling deleted a row ${RULE}`);
      assert.equal(await store.deleteMessages([upper.record.ref]), 1, RULE);
      assert.equal((await get(store, lower.record.ref)).record.text, 'lower', `deleting ${upper.record.ref} deleted ${lower.record.ref} ${RULE}`);
    });

    test("a principal's rows are not another principal's whose id differs only in case", async (store) => {
      const [row] = await insert(store, buildMessageRow({ record: { principalId: 'Acme', externalId: 'order-1' }, orderKey: 5 }));
      assert.deepEqual(await store.findByExternalId('ACME', 'order-1', 10), [], `findByExternalId('ACME') found Acme's row ${RULE}`);
      assert.deepEqual(refsOf(await store.findByExternalId('Acme', 'order-1', 10)), [row!.record.ref], RULE);
      assert.equal((await store.queueEnds(1, 'acme', T0)).principalLast, null, `queueEnds of acme counted Acme's row ${RULE}`);
      if (store.countQueued !== undefined) assert.equal((await store.countQueued('acme')).bulk, 0, `countQueued('acme') counted Acme's row ${RULE}`);
    });

    test('external ids that differ only in case are found apart', async (store) => {
      const [lower, upper] = await insert(store, buildMessageRow({ record: { externalId: 'invoice-7a' } }), buildMessageRow({ record: { externalId: 'INVOICE-7A' } }));
      assert.deepEqual(refsOf(await store.findByExternalId('principal-a', 'invoice-7a', 10)), [lower!.record.ref], RULE);
      assert.deepEqual(refsOf(await store.findByExternalId('principal-a', 'INVOICE-7A', 10)), [upper!.record.ref], RULE);
      assert.deepEqual(await store.findByExternalId('principal-a', 'Invoice-7a', 10), [], RULE);
    });

    test('carrier ids that differ only in case are found apart', async (store) => {
      const [lower, upper] = await insert(store, buildMessageRow({ carrierIds: ['msg-abc123'] }), buildMessageRow({ carrierIds: ['MSG-ABC123'] }));
      assert.equal((await store.findByCarrierId(['msg-abc123']))?.record.ref, lower!.record.ref, RULE);
      assert.equal((await store.findByCarrierId(['MSG-ABC123']))?.record.ref, upper!.record.ref, RULE);
      assert.equal(await store.findByCarrierId(['Msg-Abc123']), null, `a third spelling found a row ${RULE}`);
    });

    test('idempotency keys and their principals that differ only in case are different keys', async (store) => {
      await store.insertMessages([buildMessageRow()], { idempotency: idempotencyRecord('principal-a', 'order-key', T0, 3_600_000, 'a'.repeat(64)) });
      for (const [principalId, key, hash] of [['principal-a', 'ORDER-KEY', 'b'], ['Principal-A', 'order-key', 'c']] as const) {
        const refusal = await store.insertMessages([buildMessageRow({ record: { principalId } })], { idempotency: idempotencyRecord(principalId, key, T0, 3_600_000, hash.repeat(64)) }).catch((error: unknown) => {
          assert.fail(`storing key ${key} of ${principalId} after order-key of principal-a threw (${String(error)}) ${RULE}`);
        });
        assert.equal(refusal, undefined, `key ${key} of ${principalId} was refused after order-key of principal-a ${RULE}`);
        assert.equal((await store.findIdempotency(principalId, key, T0))?.bodyHash, hash.repeat(64), `${principalId} ${key} ${RULE}`);
      }
      assert.equal((await store.findIdempotency('principal-a', 'order-key', T0))?.bodyHash, 'a'.repeat(64), RULE);
      assert.equal(await store.findIdempotency('principal-a', 'Order-Key', T0), null, RULE);
    });

    test('credit balances of principals whose ids differ only in case are apart', async (store) => {
      await store.addCredit('Acme', 5);
      assert.equal(await store.creditBalance('acme'), 0, `acme's balance is not Acme's ${RULE}`);
      assert.equal(await store.addCredit('acme', 2), 2, RULE);
      assert.equal(await store.creditBalance('Acme'), 5, RULE);
      assert.equal((await store.insertMessages([buildMessageRow({ record: { principalId: 'ACME' } })], { credit: { principalId: 'ACME', units: 1 } }))?.refused, 'insufficient-credit', `ACME took from Acme's balance ${RULE}`);
    });
  });
}

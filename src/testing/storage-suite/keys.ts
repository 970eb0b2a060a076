/**
 * The storage contract suite's tests of one topic. Keys are compared exactly, case included:
 * message refs, principal ids, external ids and `Idempotency-Key` values that differ only in
 * case are different keys. Kept as a topic of its own because a database whose default
 * collation ignores case (MySQL and MariaDB's) passes every other test and then finds one
 * customer's message by another's ref spelled in capitals, refuses a new ref as a duplicate,
 * or replays an answer for a key the client never sent.
 */
import assert from 'node:assert/strict';
import type { IdempotencyRecord } from '../../storage/contract.js';
import type { SuiteContext } from './context.js';
import { buildNewMessage, LEASE, refsOf, T0 } from './fixtures.js';

const RULE = '(rule: refs, principal ids, external ids and idempotency keys are case-sensitive: compare them as bytes, e.g. a binary collation)';

/** Registers the tests of this topic (see the module comment). */
export function keyTests({ describe, test, get }: SuiteContext): void {
  describe('keys are case-sensitive', () => {
    test('refs that differ only in case are two messages, each found by its own spelling only', async (storage) => {
      const lower = buildNewMessage({ ref: `ref-case-${T0}-abc`, text: 'lower' });
      const upper = buildNewMessage({ ref: `REF-CASE-${T0}-ABC`, text: 'upper' });
      await storage.insertMessages([lower]);
      await storage.insertMessages([upper]).catch((error: unknown) => {
        assert.fail(`storing ref ${upper.ref} after ${lower.ref} threw (${String(error)}) ${RULE}`);
      });
      assert.equal((await get(storage, lower)).text, 'lower', `${lower.ref} ${RULE}`);
      assert.equal((await get(storage, upper)).text, 'upper', `${upper.ref} ${RULE}`);
      assert.equal(await storage.getMessage(lower.principalId, `Ref-Case-${T0}-abc`), null, `a third spelling names no message ${RULE}`);
      assert.equal((await storage.recordSubmission(`Ref-Case-${T0}-abc`, 0, 'c-x', T0 + 1)).kind, 'stale', `a submission under a third spelling ${RULE}`);
      assert.equal((await get(storage, lower)).parts[0]!.carrierId, null, `${RULE}`);
    });

    test("a principal's messages are not another principal's whose id differs only in case", async (storage) => {
      const message = buildNewMessage({ principalId: 'Acme', externalId: 'order-1' });
      await storage.insertMessages([message]);
      assert.equal(await storage.getMessage('acme', message.ref), null, `getMessage('acme') found Acme's message ${RULE}`);
      assert.deepEqual(await storage.findByExternalId('ACME', 'order-1', 10), [], `findByExternalId('ACME') found Acme's message ${RULE}`);
      assert.deepEqual(refsOf(await storage.findByExternalId('Acme', 'order-1', 10)), [message.ref]);
    });

    test('external ids that differ only in case are found apart', async (storage) => {
      const lower = buildNewMessage({ externalId: 'invoice-7a' });
      const upper = buildNewMessage({ externalId: 'INVOICE-7A' });
      await storage.insertMessages([lower, upper]);
      assert.deepEqual(refsOf(await storage.findByExternalId('principal-a', 'invoice-7a', 10)), [lower.ref], RULE);
      assert.deepEqual(refsOf(await storage.findByExternalId('principal-a', 'INVOICE-7A', 10)), [upper.ref], RULE);
      assert.deepEqual(await storage.findByExternalId('principal-a', 'Invoice-7a', 10), [], RULE);
    });

    test('idempotency keys and their principals that differ only in case are different keys', async (storage, skip) => {
      if (storage.findIdempotency === undefined) {
        skip('the storage has no findIdempotency');
        return;
      }
      const record = (principalId: string, key: string, bodyHash: string): IdempotencyRecord => ({
        principalId, key, bodyHash, status: 200, body: '[]', createdAt: T0, expiresAt: T0 + 3_600_000,
      });
      await storage.insertMessages([buildNewMessage()], { owner: 'w', until: T0 + LEASE }, record('principal-a', 'order-key', 'a'.repeat(64)));
      for (const [principalId, key, hash] of [['principal-a', 'ORDER-KEY', 'b'], ['Principal-A', 'order-key', 'c']] as const) {
        await storage.insertMessages([buildNewMessage({ principalId })], undefined, record(principalId, key, hash.repeat(64))).catch((error: unknown) => {
          assert.fail(`storing key ${key} of ${principalId} after order-key of principal-a threw (${String(error)}) ${RULE}`);
        });
        assert.equal((await storage.findIdempotency(principalId, key, T0))?.bodyHash, hash.repeat(64), `${principalId} ${key} ${RULE}`);
      }
      assert.equal((await storage.findIdempotency('principal-a', 'order-key', T0))?.bodyHash, 'a'.repeat(64), RULE);
      assert.equal(await storage.findIdempotency('principal-a', 'Order-Key', T0), null, RULE);
    });

    test('credit balances of principals whose ids differ only in case are apart', async (storage, skip) => {
      if (storage.topUpCredit === undefined || storage.creditBalance === undefined) {
        skip('the storage has no credit ledger');
        return;
      }
      await storage.topUpCredit('Acme', 5, T0);
      assert.equal(await storage.creditBalance('acme'), 0, `acme's balance is not Acme's ${RULE}`);
      assert.equal(await storage.topUpCredit('acme', 2, T0), 2, RULE);
      assert.equal(await storage.creditBalance('Acme'), 5, RULE);
    });
  });
}

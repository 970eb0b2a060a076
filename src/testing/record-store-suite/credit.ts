/**
 * The record-store contract suite's tests of one topic: credit balances. `addCredit` and
 * `creditBalance` keep one balance per principal; an insert's credit guard takes its units
 * with the rows or, when the balance is smaller, stores nothing and returns the refusal;
 * racing charges never spend more than the balance. (Refunds ride on writes: see the
 * writes topic.) Kept as a topic of its own because a slip here takes a customer's money
 * twice or sends what nobody paid for.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { RecordSuiteContext } from './context.js';
import { buildMessageRow, buildMessageRows, idempotencyRecord, RACE_ROUNDS, T0 } from './fixtures.js';

const BALANCE = '(rule: addCredit adds to the principal\'s balance, created at 0, and returns the new balance; creditBalance is 0 for a principal with none)';
const TAKE = '(rule: an insert guarded by a credit take stores its rows and takes the units when the balance is at least the units; otherwise it returns { refused: "insufficient-credit" } and stores and takes nothing)';
const ATOMIC = '(rule: the balance check, the take and the insert are one atomic step)';

/** Registers the tests of this topic (see the module comment). */
export function creditTests({ describe, test, get }: RecordSuiteContext): void {
  describe('credit', () => {
    test('keeps a balance per principal: 0 until added to, then the sum of what was added', async (store) => {
      assert.equal(await store.creditBalance('principal-a'), 0, BALANCE);
      assert.equal(await store.addCredit('principal-a', 5), 5, BALANCE);
      assert.equal(await store.addCredit('principal-a', 7), 12, BALANCE);
      assert.equal(await store.creditBalance('principal-a'), 12, BALANCE);
      assert.equal(await store.creditBalance('principal-b'), 0, `another principal's balance is its own ${BALANCE}`);
    });

    test('a credit guard takes its units with the rows, down to exactly 0', async (store) => {
      await store.addCredit('principal-a', 10);
      const rows = buildMessageRows(2);
      assert.equal(await store.insertMessages(rows, { credit: { principalId: 'principal-a', units: 6 } }), undefined, TAKE);
      for (const row of rows) await get(store, row.record.ref);
      assert.equal(await store.creditBalance('principal-a'), 4, TAKE);
      assert.equal(await store.insertMessages([buildMessageRow()], { credit: { principalId: 'principal-a', units: 4 } }), undefined, `exactly the balance may be taken ${TAKE}`);
      assert.equal(await store.creditBalance('principal-a'), 0, TAKE);
    });

    test('a credit guard the balance cannot pay returns { refused: "insufficient-credit" }: no row, no take, no idempotency record', async (store) => {
      await store.addCredit('principal-a', 3);
      const rows = buildMessageRows(2);
      const refusal = await store.insertMessages(rows, { idempotency: idempotencyRecord('principal-a', 'k'), credit: { principalId: 'principal-a', units: 4 } });
      assert.equal(refusal?.refused, 'insufficient-credit', `4 units asked of a balance of 3 gave ${JSON.stringify(refusal)} ${TAKE}`);
      if (refusal.refused === 'insufficient-credit' && refusal.balance !== undefined) assert.equal(refusal.balance, 3, `the balance a refusal reports is the one the store saw ${TAKE}`);
      for (const row of rows) assert.equal(await store.getMessage(row.record.ref), null, `a refused insert stored ${row.record.ref} ${TAKE}`);
      assert.equal(await store.creditBalance('principal-a'), 3, `a refused insert took credit ${TAKE}`);
      assert.equal(await store.findIdempotency('principal-a', 'k', T0), null, `a refused insert put its idempotency record ${TAKE}`);
      const broke = buildMessageRow({ record: { principalId: 'principal-b' } });
      assert.equal((await store.insertMessages([broke], { credit: { principalId: 'principal-b', units: 1 } }))?.refused, 'insufficient-credit', `a principal with no balance has 0 ${TAKE}`);
      assert.equal(await store.getMessage(broke.record.ref), null, TAKE);
    });

    test(`20 charges racing for a balance never spend more than it (${RACE_ROUNDS} rounds)`, async (store) => {
      for (let round = 0; round < RACE_ROUNDS; round++) {
        const principalId = `racer-${round}`;
        await store.addCredit(principalId, 7);
        const rows = buildMessageRows(20, { record: { principalId } });
        const results = await Promise.allSettled(rows.map((row) => store.insertMessages([row], { credit: { principalId, units: 1 } })));
        const threw = results.find((r) => r.status === 'rejected');
        assert.equal(threw, undefined, `round ${round}: a charge threw ${String((threw as PromiseRejectedResult | undefined)?.reason)} (rule: a refusal is returned, not thrown)`);
        const accepted = results.filter((r) => r.status === 'fulfilled' && r.value === undefined).length;
        const stored = (await Promise.all(rows.map((row) => store.getMessage(row.record.ref)))).filter((row) => row !== null).length;
        const balance = await store.creditBalance(principalId);
        assert.equal(accepted, 7, `round ${round}: 20 charges of 1 unit raced for a balance of 7 and ${accepted} were accepted ${ATOMIC}`);
        assert.equal(stored, 7, `round ${round}: ${stored} rows stored for 7 units ${ATOMIC}`);
        assert.equal(balance, 0, `round ${round}: the balance after 7 units taken of 7 is ${balance} ${ATOMIC}`);
      }
    });
  });
}

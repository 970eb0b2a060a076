/**
 * The storage contract suite's tests of one topic. The credit ledger: a request's charge
 * taken with its messages or not at all, never more than the balance (also when requests
 * race for it), and a message's units given back once, in the step that ends it, as the
 * refund rule says (`refundUnits`). Kept as a topic of its own
 * because a slip here takes a customer's money twice or gives it back twice. Skipped for an
 * adapter without the optional `topUpCredit`.
 */
import assert from 'node:assert/strict';
import { outcome } from '../../lifecycle/states.js';
import { type CreditCharge } from '../../storage/credit-record.js';
import { isInsufficientCredit, type RefundPolicy } from '../../lifecycle/credit.js';
import type { IdempotencyRecord, NewMessage, Storage } from '../../storage/contract.js';
import type { SuiteContext } from './context.js';
import { buildNewMessage, buildNewMessages, DELIVERED, FAILED, RACE_ROUNDS, receipt, T0, UNDELIVERED } from './fixtures.js';

type Ledger = Storage & Required<Pick<Storage, 'topUpCredit' | 'creditBalance'>>;

/** The charge of `messages` (one principal's), under `refunds`. */
function chargeOf(messages: readonly NewMessage[], refunds: RefundPolicy = 'unsent'): CreditCharge {
  return { principalId: messages[0]!.principalId, units: messages.reduce((sum, m) => sum + m.smsCount, 0), refunds };
}

/** Inserts `messages` with their charge. */
async function insertCharged(storage: Storage, messages: NewMessage[], refunds: RefundPolicy = 'unsent'): Promise<NewMessage[]> {
  await storage.insertMessages(messages, undefined, undefined, chargeOf(messages, refunds));
  return messages;
}

const REFUSED = outcome('rejected', 'rejected', 'Refused by the carrier route');

/** Registers the tests of this topic (see the module comment). */
export function creditTests({ describe, test, get, submitAll }: SuiteContext): void {
  const ledger = (name: string, fn: (storage: Ledger) => Promise<void>): void =>
    test(name, async (storage, skip) => {
      if (storage.topUpCredit === undefined || storage.creditBalance === undefined) {
        skip('the storage has no credit ledger');
        return;
      }
      await fn(storage as Ledger);
    });

  describe('credit ledger', () => {
    ledger('keeps a balance per principal: 0 until topped up, then the sum of the top-ups', async (storage) => {
      assert.equal(await storage.creditBalance('principal-a'), 0);
      assert.equal(await storage.topUpCredit('principal-a', 5, T0), 5);
      assert.equal(await storage.topUpCredit('principal-a', 7, T0 + 1), 12);
      assert.equal(await storage.creditBalance('principal-a'), 12);
      assert.equal(await storage.creditBalance('principal-b'), 0, "another principal's balance is its own");
    });

    ledger('takes the units of a request with its messages', async (storage) => {
      await storage.topUpCredit('principal-a', 10, T0);
      const messages = await insertCharged(storage, [buildNewMessage({ smsCount: 3 }), buildNewMessage()]);
      assert.equal(await storage.creditBalance('principal-a'), 6);
      for (const message of messages) assert.equal((await get(storage, message)).state, 'queued');
    });

    ledger('refuses a request the balance cannot pay: throws InsufficientCreditError, stores and takes nothing', async (storage) => {
      await storage.topUpCredit('principal-a', 3, T0);
      const messages = buildNewMessages(2, { smsCount: 2 });
      const refusal = await storage.insertMessages(messages, undefined, undefined, chargeOf(messages)).then(() => null, (error: unknown) => error);
      assert.ok(isInsufficientCredit(refusal), `expected an InsufficientCreditError, got ${String(refusal)}`);
      assert.equal(refusal.units, 4);
      assert.equal(await storage.creditBalance('principal-a'), 3);
      for (const message of messages) assert.equal(await storage.getMessage(message.principalId, message.ref), null);
      await insertCharged(storage, buildNewMessages(1, { smsCount: 3 }));
      assert.equal(await storage.creditBalance('principal-a'), 0, 'exactly the balance may be spent');
    });

    ledger('a request refused for its idempotency key takes nothing', async (storage) => {
      if (storage.findIdempotency === undefined) return;
      await storage.topUpCredit('principal-a', 10, T0);
      const key: IdempotencyRecord = { principalId: 'principal-a', key: 'k', bodyHash: 'a'.repeat(64), status: 200, body: '[]', createdAt: T0, expiresAt: T0 + 1_000 };
      const first = buildNewMessages(1);
      await storage.insertMessages(first, undefined, key, chargeOf(first));
      const second = buildNewMessages(2);
      await assert.rejects(storage.insertMessages(second, undefined, { ...key, bodyHash: 'b'.repeat(64) }, chargeOf(second)));
      assert.equal(await storage.creditBalance('principal-a'), 9);
    });

    ledger(`never spends more than the balance when requests race for it (${RACE_ROUNDS} rounds)`, async (storage) => {
      for (let round = 0; round < RACE_ROUNDS; round++) {
        const principalId = `racer-${round}`;
        await storage.topUpCredit(principalId, 4, T0);
        const requests = Array.from({ length: 7 }, () => buildNewMessages(1, { principalId }));
        const results = await Promise.allSettled(requests.map((messages) => insertCharged(storage, messages)));
        for (const r of results) if (r.status === 'rejected') assert.ok(isInsufficientCredit(r.reason), String(r.reason));
        const stored = results.filter((r) => r.status === 'fulfilled').length;
        const balance = await storage.creditBalance(principalId);
        assert.equal(stored, 4, `round ${round}: 7 requests of 1 unit raced for a balance of 4 and ${stored} were stored (rule: the check and the charge are one atomic step with the insert)`);
        assert.equal(balance, 0, `round ${round}: the balance after 4 units spent of 4`);
      }
    });

    ledger('gives back the units of a message that ends before reaching the carrier, once', async (storage) => {
      await storage.topUpCredit('principal-a', 10, T0);
      const [message] = await insertCharged(storage, [buildNewMessage({ smsCount: 3 })]);
      assert.equal(await storage.creditBalance('principal-a'), 7);
      assert.ok(await storage.finish(message!.ref, REFUSED, T0 + 5));
      assert.equal(await storage.creditBalance('principal-a'), 10);
      assert.equal(await storage.finish(message!.ref, FAILED, T0 + 6), null);
      assert.equal(await storage.creditBalance('principal-a'), 10, 'a second end gives nothing');
    });

    ledger('gives back only the parts the carrier never accepted', async (storage) => {
      await storage.topUpCredit('principal-a', 10, T0);
      const [message] = await insertCharged(storage, [buildNewMessage({ smsCount: 3 })]);
      await storage.recordSubmission(message!.ref, 0, `${message!.ref}-c0`, T0 + 2);
      await storage.finish(message!.ref, REFUSED, T0 + 5);
      assert.equal(await storage.creditBalance('principal-a'), 9);
    });

    ledger('keeps the units of a delivered message, and of a failed one under `unsent`', async (storage) => {
      await storage.topUpCredit('principal-a', 10, T0);
      const [delivered, undelivered, expired] = await insertCharged(storage, buildNewMessages(3, { smsCount: 2 }));
      for (const message of [delivered!, undelivered!, expired!]) await submitAll(storage, message);
      await storage.applyReceipt(receipt(`${delivered!.ref}-c0`, DELIVERED));
      await storage.applyReceipt(receipt(`${delivered!.ref}-c1`, DELIVERED));
      await storage.applyReceipt(receipt(`${undelivered!.ref}-c0`, UNDELIVERED));
      await storage.applyReceipt(receipt(`${undelivered!.ref}-c1`, UNDELIVERED));
      assert.equal((await storage.expireOverdue(T0 + 1_000, 10, outcome('expired', 'expired'), T0 + 1_000)).length, 1);
      assert.equal((await get(storage, undelivered!)).state, 'undelivered');
      assert.equal(await storage.creditBalance('principal-a'), 4);
    });

    ledger('gives back all the units of a failed message under `unsent-and-failed`, but not of a delivered one', async (storage) => {
      await storage.topUpCredit('principal-a', 10, T0);
      const [delivered, undelivered, expired] = await insertCharged(storage, buildNewMessages(3, { smsCount: 2 }), 'unsent-and-failed');
      for (const message of [delivered!, undelivered!, expired!]) await submitAll(storage, message);
      await storage.applyReceipt(receipt(`${delivered!.ref}-c0`, DELIVERED));
      await storage.applyReceipt(receipt(`${delivered!.ref}-c1`, DELIVERED));
      await storage.applyReceipt(receipt(`${undelivered!.ref}-c0`, UNDELIVERED));
      await storage.applyReceipt(receipt(`${undelivered!.ref}-c1`, DELIVERED));
      await storage.expireOverdue(T0 + 1_000, 10, outcome('expired', 'expired'), T0 + 1_000);
      assert.equal(await storage.creditBalance('principal-a'), 8);
    });

    ledger('gives back all the units of a scheduled message cancelled and of one whose validity elapsed unsent', async (storage) => {
      if (storage.cancelMessages === undefined || storage.expireUnsent === undefined) return;
      await storage.topUpCredit('principal-a', 10, T0);
      const [scheduled] = await insertCharged(storage, [buildNewMessage({ smsCount: 2, sendAt: T0 + 60_000 })]);
      const [stale] = await insertCharged(storage, [buildNewMessage({ smsCount: 3, validUntil: T0 + 1_000 })]);
      assert.equal(await storage.creditBalance('principal-a'), 5);
      await storage.cancelMessages('principal-a', [scheduled!.ref], T0 + 10);
      assert.equal((await get(storage, scheduled!)).state, 'cancelled');
      assert.equal(await storage.creditBalance('principal-a'), 7);
      await storage.expireUnsent(T0 + 1_000, 10);
      assert.equal((await get(storage, stale!)).state, 'expired');
      assert.equal(await storage.creditBalance('principal-a'), 10);
    });

    ledger('gives nothing back for a message stored without a charge', async (storage) => {
      await storage.topUpCredit('principal-a', 4, T0);
      const message = buildNewMessage();
      await storage.insertMessages([message]);
      await storage.finish(message.ref, REFUSED, T0 + 5);
      assert.equal(await storage.creditBalance('principal-a'), 4);
    });
  });
}

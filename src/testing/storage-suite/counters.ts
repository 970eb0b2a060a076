/**
 * The storage contract suite's tests of one topic. The counters of a request
 * (`insertMessages`' `counters`, what spend caps are counted with): added in the step that
 * stores the messages, or, when one would pass its limit, nothing stored and no counter
 * changed (also when requests race for the last units, and when the key or the credit
 * refuses the request instead); `purgeCounters` deletes those of ended periods. Skipped for
 * an adapter without the optional `countedUnits`.
 */
import assert from 'node:assert/strict';
import { isCounterLimit } from '../../lifecycle/counter-limit.js';
import type { UnitCounter } from '../../storage/counter-record.js';
import type { IdempotencyRecord, NewMessage, Storage } from '../../storage/contract.js';
import type { SuiteContext } from './context.js';
import { buildNewMessage, buildNewMessages, RACE_ROUNDS, T0 } from './fixtures.js';

type Counting = Storage & Required<Pick<Storage, 'countedUnits'>>;

/** A counter of `messages`' units (one principal's) in `period`, capped at `limit`. */
function counterOf(messages: readonly NewMessage[], period: string, limit: number): UnitCounter {
  return { principalId: messages[0]!.principalId, period, units: messages.reduce((sum, m) => sum + m.smsCount, 0), limit };
}

/** Inserts `messages` with `counters`; resolves with what the storage answered. */
function insertCounted(storage: Storage, messages: NewMessage[], counters: UnitCounter[]): Promise<void | readonly number[]> {
  return storage.insertMessages(messages, undefined, undefined, undefined, counters);
}

/** The error `promise` rejects with, or `null` when it resolves. */
async function refusalOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (error: unknown) => error,
  );
}

/** Registers the tests of this topic (see the module comment). */
export function counterTests({ describe, test, get }: SuiteContext): void {
  const counting = (name: string, fn: (storage: Counting) => Promise<void>): void =>
    test(name, async (storage, skip) => {
      if (storage.countedUnits === undefined) {
        skip('the storage keeps no counters');
        return;
      }
      await fn(storage as Counting);
    });

  describe('counters', () => {
    counting('adds a request’s units to each of its counters with its messages, and answers their new values', async (storage) => {
      assert.equal(await storage.countedUnits('principal-a', 'day:1'), 0, 'a counter never added to is 0');
      const first = [buildNewMessage({ smsCount: 3 }), buildNewMessage()];
      assert.deepEqual(await insertCounted(storage, first, [counterOf(first, 'month:1', 100), counterOf(first, 'day:1', 10)]), [4, 4]);
      const second = [buildNewMessage({ smsCount: 2 })];
      assert.deepEqual(await insertCounted(storage, second, [counterOf(second, 'month:1', 100), counterOf(second, 'day:2', 10)]), [6, 2]);
      assert.equal(await storage.countedUnits('principal-a', 'month:1'), 6);
      assert.equal(await storage.countedUnits('principal-a', 'day:1'), 4);
      assert.equal(await storage.countedUnits('principal-b', 'month:1'), 0, "another principal's counter is its own");
      for (const message of [...first, ...second]) assert.equal((await get(storage, message)).state, 'queued');
    });

    counting('refuses a request that would pass a limit: throws CounterLimitError naming it, stores nothing, changes no counter', async (storage) => {
      const before = buildNewMessages(1, { smsCount: 3 });
      await insertCounted(storage, before, [counterOf(before, 'month:1', 5), counterOf(before, 'day:1', 10)]);
      const messages = buildNewMessages(2, { smsCount: 2 });
      const refusal = await refusalOf(insertCounted(storage, messages, [counterOf(messages, 'day:1', 10), counterOf(messages, 'month:1', 5)]));
      assert.ok(isCounterLimit(refusal), `expected a CounterLimitError, got ${String(refusal)}`);
      assert.equal(refusal.counter, 1, 'the refusal names the counter that would pass its limit (index 1: month:1)');
      assert.equal(await storage.countedUnits('principal-a', 'day:1'), 3, 'rule: a refused request adds to none of its counters, not even those within their limits');
      assert.equal(await storage.countedUnits('principal-a', 'month:1'), 3);
      for (const message of messages) assert.equal(await storage.getMessage(message.principalId, message.ref), null);
      const last = buildNewMessages(1, { smsCount: 2 });
      assert.deepEqual(await insertCounted(storage, last, [counterOf(last, 'day:1', 10), counterOf(last, 'month:1', 5)]), [5, 5], 'exactly the limit may be reached');
    });

    counting('a request refused for its idempotency key or its credit adds to no counter', async (storage) => {
      if (storage.findIdempotency !== undefined) {
        const key: IdempotencyRecord = { principalId: 'principal-a', key: 'k', bodyHash: 'a'.repeat(64), status: 200, body: '[]', createdAt: T0, expiresAt: T0 + 1_000 };
        const first = buildNewMessages(1);
        await storage.insertMessages(first, undefined, key, undefined, [counterOf(first, 'day:1', 10)]);
        const second = buildNewMessages(2);
        await assert.rejects(storage.insertMessages(second, undefined, { ...key, bodyHash: 'b'.repeat(64) }, undefined, [counterOf(second, 'day:1', 10)]));
        assert.equal(await storage.countedUnits('principal-a', 'day:1'), 1);
      }
      if (storage.topUpCredit !== undefined) {
        const broke = buildNewMessages(1, { principalId: 'principal-b' });
        const charge = { principalId: 'principal-b', units: 1, refunds: 'unsent' as const };
        await assert.rejects(storage.insertMessages(broke, undefined, undefined, charge, [counterOf(broke, 'day:1', 10)]));
        assert.equal(await storage.countedUnits('principal-b', 'day:1'), 0);
      }
    });

    test('purgeCounters deletes the counters of every principal whose period is not live, up to its limit', async (storage, skip) => {
      if (storage.countedUnits === undefined || storage.purgeCounters === undefined) {
        skip('the storage keeps no counters, or does not purge them');
        return;
      }
      for (const [principalId, period] of [['principal-a', 'day:1'], ['principal-b', 'day:1'], ['principal-a', 'day:2'], ['principal-a', 'month:1']] as const) {
        const messages = buildNewMessages(1, { principalId });
        await insertCounted(storage, messages, [counterOf(messages, period, 10)]);
      }
      assert.equal(await storage.purgeCounters(['day:2', 'month:1'], 1), 1, 'at most limit counters go');
      assert.equal(await storage.purgeCounters(['day:2', 'month:1'], 10), 1);
      assert.equal(await storage.purgeCounters(['day:2', 'month:1'], 10), 0);
      assert.equal(await storage.countedUnits('principal-a', 'day:1'), 0, 'an ended period\'s counter is gone (rule: purgeCounters keeps only the live periods)');
      assert.equal(await storage.countedUnits('principal-b', 'day:1'), 0);
      assert.equal(await storage.countedUnits('principal-a', 'day:2'), 1, 'a live period\'s counter stays');
      assert.equal(await storage.countedUnits('principal-a', 'month:1'), 1);
    });

    counting(`never passes a limit when requests race for it (${RACE_ROUNDS} rounds)`, async (storage) => {
      for (let round = 0; round < RACE_ROUNDS; round++) {
        const principalId = `racer-${round}`;
        const requests = Array.from({ length: 7 }, () => buildNewMessages(1, { principalId }));
        const results = await Promise.allSettled(requests.map((messages) => insertCounted(storage, messages, [counterOf(messages, 'day:1', 4)])));
        for (const r of results) if (r.status === 'rejected') assert.ok(isCounterLimit(r.reason), String(r.reason));
        const stored = results.filter((r) => r.status === 'fulfilled').length;
        assert.equal(stored, 4, `round ${round}: 7 requests of 1 unit raced for a limit of 4 and ${stored} were stored (rule: the check and the addition are one atomic step with the insert)`);
        assert.equal(await storage.countedUnits(principalId, 'day:1'), 4, `round ${round}: the counter after 4 units of 4`);
        const values = results.flatMap((r) => (r.status === 'fulfilled' ? [(r.value as number[])[0]!] : [])).sort();
        assert.deepEqual(values, [1, 2, 3, 4], `round ${round}: each stored request answers the value its own units made`);
      }
    });
  });
}

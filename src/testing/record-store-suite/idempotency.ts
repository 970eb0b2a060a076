/**
 * The record-store contract suite's tests of one topic: idempotency records. An insert's
 * guard puts its record unless the principal's key is held by a live one (then the insert
 * is refused, not thrown, and stores nothing), an expired one is replaced, two requests with
 * one key racing store exactly one; `findIdempotency` sees only live records and
 * `purgeIdempotency` deletes expired ones, oldest expiry first. Kept as a topic of its own
 * because a slip here sends a client's retry a second time.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { RecordSuiteContext } from './context.js';
import { buildMessageRow, buildMessageRows, idempotencyRecord, RACE_ROUNDS, T0 } from './fixtures.js';

const PUT_IF_FREE = '(rule: an insert guarded by an idempotency record whose principal and key are held by a live record, expiresAt > the new createdAt, returns { refused: "key-taken" } and stores nothing; an expired record is replaced)';
const ATOMIC = '(rule: the key check and the insert are one atomic step)';
const LIVE = '(rule: findIdempotency returns the record while expiresAt > now, else null)';
const PURGE = '(rule: purgeIdempotency deletes up to limit records with expiresAt <= now, oldest expiry first, and returns how many)';

/** Registers the tests of this topic (see the module comment). */
export function idempotencyTests({ describe, test, insert, get }: RecordSuiteContext): void {
  describe('idempotency guard', () => {
    test('a guarded insert puts its idempotency record with the rows', async (store) => {
      const key = idempotencyRecord('principal-a', 'order-1');
      const row = buildMessageRow();
      assert.equal(await store.insertMessages([row], { idempotency: key }), undefined, PUT_IF_FREE);
      await get(store, row.record.ref);
      assert.deepEqual(await store.findIdempotency('principal-a', 'order-1', T0), key, `the record comes back as given ${LIVE}`);
    });

    test('a live key refuses the insert with { refused: "key-taken" }: no row is stored, no credit taken, the record kept', async (store) => {
      const first = idempotencyRecord('principal-a', 'order-1', T0, 1_000);
      await store.insertMessages([buildMessageRow()], { idempotency: first });
      await store.addCredit('principal-a', 5);
      const rows = buildMessageRows(2);
      const second = idempotencyRecord('principal-a', 'order-1', T0 + 999, 1_000, 'b'.repeat(64));
      const refusal = await store.insertMessages(rows, { idempotency: second, credit: { principalId: 'principal-a', units: 2 } });
      assert.deepEqual(refusal, { refused: 'key-taken' }, `a key live until ${first.expiresAt} at ${second.createdAt} ${PUT_IF_FREE}`);
      for (const row of rows) assert.equal(await store.getMessage(row.record.ref), null, `a refused insert stored ${row.record.ref} ${PUT_IF_FREE}`);
      assert.equal(await store.creditBalance('principal-a'), 5, `a refused insert took credit ${PUT_IF_FREE}`);
      assert.equal((await store.findIdempotency('principal-a', 'order-1', T0))?.bodyHash, first.bodyHash, `the live record was replaced ${PUT_IF_FREE}`);
    });

    test('a key expired at the new createdAt is replaced by the new record', async (store) => {
      const first = idempotencyRecord('principal-a', 'order-1', T0, 1_000);
      await store.insertMessages([buildMessageRow()], { idempotency: first });
      const row = buildMessageRow();
      const second = idempotencyRecord('principal-a', 'order-1', first.expiresAt, 1_000, 'b'.repeat(64));
      assert.equal(await store.insertMessages([row], { idempotency: second }), undefined, `a key that expired at ${first.expiresAt} refused at ${second.createdAt} ${PUT_IF_FREE}`);
      await get(store, row.record.ref);
      assert.deepEqual(await store.findIdempotency('principal-a', 'order-1', second.createdAt), second, `the expired record was not replaced ${PUT_IF_FREE}`);
    });

    test("another key, or another principal's same key, is free", async (store) => {
      await store.insertMessages([buildMessageRow()], { idempotency: idempotencyRecord('principal-a', 'order-1') });
      for (const [principalId, key] of [['principal-a', 'order-2'], ['principal-b', 'order-1']] as const) {
        const row = buildMessageRow({ record: { principalId } });
        assert.equal(await store.insertMessages([row], { idempotency: idempotencyRecord(principalId, key) }), undefined, `${principalId} ${key} ${PUT_IF_FREE}`);
        assert.ok(await store.findIdempotency(principalId, key, T0), `${principalId} ${key} ${LIVE}`);
      }
    });

    test(`two guarded inserts racing with one key: exactly one is stored, the other refused (${RACE_ROUNDS} rounds)`, async (store) => {
      for (let round = 0; round < RACE_ROUNDS; round++) {
        const key = `race-${round}`;
        const rows = [buildMessageRow(), buildMessageRow()];
        const results = await Promise.allSettled(rows.map((row, i) => store.insertMessages([row], { idempotency: idempotencyRecord('principal-a', key, T0, 60_000, String(i).repeat(64)) })));
        const answers = results.map((r) => (r.status === 'fulfilled' ? JSON.stringify(r.value ?? 'stored') : `threw ${String(r.reason)}`));
        assert.deepEqual([...answers].sort(), ['"stored"', '{"refused":"key-taken"}'], `round ${round}: the two inserts gave ${answers.join(' and ')} ${PUT_IF_FREE} ${ATOMIC}`);
        const stored = await Promise.all(rows.map((row) => store.getMessage(row.record.ref)));
        assert.equal(stored.filter((row) => row !== null).length, 1, `round ${round}: ${stored.filter((row) => row !== null).length} rows stored ${ATOMIC}`);
        const winner = answers.indexOf('"stored"');
        assert.equal((await store.findIdempotency('principal-a', key, T0))?.bodyHash, String(winner).repeat(64), `round ${round}: the record kept is not the stored insert's ${ATOMIC}`);
      }
    });
  });

  describe('findIdempotency and purgeIdempotency', () => {
    test('findIdempotency finds a record while it is live only', async (store) => {
      const key = idempotencyRecord('principal-a', 'order-1', T0, 1_000);
      await store.insertMessages([buildMessageRow()], { idempotency: key });
      assert.deepEqual(await store.findIdempotency('principal-a', 'order-1', key.expiresAt - 1), key, LIVE);
      assert.equal(await store.findIdempotency('principal-a', 'order-1', key.expiresAt), null, LIVE);
      assert.equal(await store.findIdempotency('principal-a', 'order-2', T0), null, `an unknown key ${LIVE}`);
    });

    test('purgeIdempotency deletes expired records, oldest expiry first, up to the limit', async (store) => {
      const ttls = { late: 300, live: 5_000, early: 100, middle: 200 };
      for (const [key, ttl] of Object.entries(ttls)) await store.insertMessages([buildMessageRow()], { idempotency: idempotencyRecord('principal-a', key, T0, ttl) });
      // Found at T0 while it is still stored, as every record is live then.
      const kept = async () => {
        const names: string[] = [];
        for (const key of Object.keys(ttls)) if (await store.findIdempotency('principal-a', key, T0)) names.push(key);
        return names.sort();
      };
      assert.equal(await store.purgeIdempotency(T0 + 300, 2), 2, PURGE);
      assert.deepEqual(await kept(), ['late', 'live'], `after purging 2 at T0+300 ${PURGE}`);
      assert.equal(await store.purgeIdempotency(T0 + 300, 10), 1, PURGE);
      assert.deepEqual(await kept(), ['live'], `a record expiring exactly at now is expired ${PURGE}`);
      assert.equal(await store.purgeIdempotency(T0 + 300, 10), 0, PURGE);
      assert.deepEqual(await kept(), ['live'], `a live record was purged ${PURGE}`);
    });
  });
}

/**
 * The storage contract suite's tests of one topic. Idempotency records: stored with their
 * request's messages or not at all, one live record per principal and key (also when two
 * requests race for it), found only while live, replaced once expired, and swept. Kept as a
 * topic of its own because a slip here sends a customer's SMS twice (a key that does not
 * hold) or loses an answer the customer retries for (a record without its messages).
 * Skipped for an adapter without the optional `findIdempotency`.
 */
import assert from 'node:assert/strict';
import type { IdempotencyRecord, NewMessage, Storage } from '../../storage/contract.js';
import type { SuiteContext } from './context.js';
import { buildNewMessage, buildNewMessages, LEASE, RACE_ROUNDS, T0 } from './fixtures.js';

/** A record of `principal-a`'s key `key`, made at T0 and live for an hour unless overridden. */
function record(key: string, overrides: Partial<IdempotencyRecord> = {}): IdempotencyRecord {
  return {
    principalId: 'principal-a',
    key,
    bodyHash: 'a'.repeat(64),
    status: 200,
    body: '[{"external_id":"ext-1","recipient":"254700000001","sms_count":1,"message_ref":"r-1"}]',
    createdAt: T0,
    expiresAt: T0 + 3_600_000,
    ...overrides,
  };
}

/** How many of `messages` (one request's, sharing one external id) are stored: one lookup. */
async function requestStored(storage: Storage, messages: readonly NewMessage[]): Promise<number> {
  return (await storage.findByExternalId(messages[0]!.principalId, messages[0]!.externalId, 10)).length;
}

/** How many of `messages` are stored. */
async function storedCount(storage: Storage, messages: readonly NewMessage[]): Promise<number> {
  let count = 0;
  for (const message of messages) if ((await storage.getMessage(message.principalId, message.ref)) !== null) count++;
  return count;
}

/** Registers the tests of this topic (see the module comment). */
export function idempotencyTests({ describe, test }: SuiteContext): void {
  const keyed = (name: string, fn: (storage: Storage & Required<Pick<Storage, 'findIdempotency'>>) => Promise<void>): void =>
    test(name, async (storage, skip) => {
      if (storage.findIdempotency === undefined) {
        skip('the storage has no findIdempotency');
        return;
      }
      await fn(storage as Storage & Required<Pick<Storage, 'findIdempotency'>>);
    });

  describe('idempotency records', () => {
    keyed('stores the record with the messages and finds it, exactly, while it is live', async (storage) => {
      const messages = buildNewMessages(2);
      const kept = record('key-1', { body: '[{"message_ref":"\u00e9\u4f60"}]' });
      await storage.insertMessages(messages, { owner: 'w', until: T0 + LEASE }, kept);
      assert.equal(await storedCount(storage, messages), 2);
      assert.deepEqual(await storage.findIdempotency('principal-a', 'key-1', T0), kept);
      assert.deepEqual(await storage.findIdempotency('principal-a', 'key-1', kept.expiresAt - 1), kept);
      assert.equal(await storage.findIdempotency('principal-a', 'key-1', kept.expiresAt), null, 'expired at expiresAt');
      assert.equal(await storage.findIdempotency('principal-b', 'key-1', T0), null, "another principal's key");
      assert.equal(await storage.findIdempotency('principal-a', 'KEY-1', T0), null, 'keys are case-sensitive');
    });

    keyed('refuses a key a live record holds: stores none of the messages and keeps the first record', async (storage) => {
      const first = record('key-1');
      await storage.insertMessages([buildNewMessage()], undefined, first);
      const second = buildNewMessages(3);
      await assert.rejects(storage.insertMessages(second, undefined, record('key-1', { bodyHash: 'b'.repeat(64), createdAt: T0 + 5 })));
      assert.equal(await storedCount(storage, second), 0, 'no message of the refused request is stored');
      assert.deepEqual(await storage.findIdempotency('principal-a', 'key-1', T0 + 5), first);
    });

    keyed("scopes keys to the principal: another principal's same key is its own", async (storage) => {
      await storage.insertMessages([buildNewMessage()], undefined, record('shared'));
      const theirs = buildNewMessage({ principalId: 'principal-b' });
      const theirRecord = record('shared', { principalId: 'principal-b', bodyHash: 'c'.repeat(64) });
      await storage.insertMessages([theirs], undefined, theirRecord);
      assert.equal(await storedCount(storage, [theirs]), 1);
      assert.deepEqual(await storage.findIdempotency('principal-b', 'shared', T0), theirRecord);
      assert.equal((await storage.findIdempotency('principal-a', 'shared', T0))?.bodyHash, 'a'.repeat(64));
    });

    keyed('replaces a record expired when the next request with its key comes, swept or not', async (storage) => {
      await storage.insertMessages([buildNewMessage()], undefined, record('key-1', { expiresAt: T0 + 1_000 }));
      const later = buildNewMessage({ createdAt: T0 + 1_000 });
      const replacing = record('key-1', { bodyHash: 'd'.repeat(64), createdAt: T0 + 1_000, expiresAt: T0 + 2_000 });
      await storage.insertMessages([later], undefined, replacing);
      assert.equal(await storedCount(storage, [later]), 1);
      assert.deepEqual(await storage.findIdempotency('principal-a', 'key-1', T0 + 1_000), replacing);
    });

    keyed('keeps no record when the messages are not stored, so the key stays free', async (storage) => {
      const [taken] = buildNewMessages(1);
      await storage.insertMessages([taken!]);
      await assert.rejects(storage.insertMessages([buildNewMessage(), { ...taken! }], undefined, record('key-1')));
      assert.equal(await storage.findIdempotency('principal-a', 'key-1', T0), null);
      const retry = buildNewMessage();
      await storage.insertMessages([retry], undefined, record('key-1'));
      assert.equal(await storedCount(storage, [retry]), 1);
    });

    keyed(`stores exactly one of two requests with the same key sent at once (${RACE_ROUNDS} rounds)`, async (storage) => {
      for (let round = 0; round < RACE_ROUNDS; round++) {
        const key = `race-${round}`;
        const one = buildNewMessages(2, { externalId: `one-${round}` });
        const two = buildNewMessages(2, { externalId: `two-${round}` });
        const results = await Promise.allSettled([
          storage.insertMessages(one, undefined, record(key, { bodyHash: '1'.repeat(64) })),
          storage.insertMessages(two, undefined, record(key, { bodyHash: '2'.repeat(64) })),
        ]);
        assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected'], `round ${round}: one of two requests with one key is stored, the other refused (rule: a key is taken by at most one request, atomically)`);
        const winner = results[0]!.status === 'fulfilled' ? one : two;
        const loser = winner === one ? two : one;
        assert.equal(await requestStored(storage, winner), 2, `round ${round}: every message of the stored request`);
        assert.equal(await requestStored(storage, loser), 0, `round ${round}: no message of the refused request`);
        const kept = await storage.findIdempotency('principal-a', key, T0);
        assert.equal(kept?.bodyHash, (winner === one ? '1' : '2').repeat(64), `round ${round}: the record is the stored request's`);
      }
    });

    keyed(`a refused key fails only its own request among requests stored at the same time (${RACE_ROUNDS} rounds)`, async (storage) => {
      for (let round = 0; round < RACE_ROUNDS; round++) {
        await storage.insertMessages([buildNewMessage()], undefined, record(`held-${round}`));
        const refused = buildNewMessages(2, { externalId: `refused-${round}` });
        const plain = buildNewMessages(2, { externalId: `plain-${round}` });
        const otherKey = buildNewMessages(1, { externalId: `other-${round}` });
        const results = await Promise.allSettled([
          storage.insertMessages(plain),
          storage.insertMessages(refused, undefined, record(`held-${round}`, { createdAt: T0 + 1 })),
          storage.insertMessages(otherKey, undefined, record(`other-${round}`)),
        ]);
        assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled'], `round ${round}: only the request with the held key is refused`);
        assert.equal(await requestStored(storage, plain), 2);
        assert.equal(await requestStored(storage, refused), 0);
        assert.equal(await requestStored(storage, otherKey), 1);
        assert.ok(await storage.findIdempotency('principal-a', `other-${round}`, T0));
      }
    });

    keyed('purgeIdempotency deletes expired records only, oldest expiry first, up to the limit', async (storage) => {
      const expiries = [T0 + 300, T0 + 100, T0 + 200, T0 + 10_000];
      for (const [i, expiresAt] of expiries.entries()) {
        await storage.insertMessages([buildNewMessage()], undefined, record(`key-${i}`, { expiresAt }));
      }
      assert.equal(await storage.purgeIdempotency!(T0 + 300, 2), 2);
      // The two oldest expiries went first: the one expiring at T0 + 300 is still there.
      assert.ok(await storage.findIdempotency('principal-a', 'key-0', T0 + 299), 'the latest expiry of the three is kept by a purge of two');
      assert.equal(await storage.purgeIdempotency!(T0 + 300, 10), 1);
      assert.equal(await storage.purgeIdempotency!(T0 + 300, 10), 0);
      assert.ok(await storage.findIdempotency('principal-a', 'key-3', T0 + 300), 'a live record is kept');
      // Its key is free again for a new request at once.
      await storage.insertMessages([buildNewMessage()], undefined, record('key-0', { createdAt: T0 + 300 }));
    });
  });
}

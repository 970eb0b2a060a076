/**
 * The storage contract suite's tests of one topic. Inserting messages and reading them
 * back: what a stored message looks like, the lookups by ref and by external id, all-or-
 * none batches, and records that are copies. Kept as a topic of its own because the first
 * thing any adapter must get right, and what every other topic builds on.
 */
import assert from 'node:assert/strict';
import type { MessageRecord } from '../../storage/contract.js';
import type { SuiteContext } from './context.js';
import { buildNewMessage, LEASE, refsOf, T0 } from './fixtures.js';

/** Registers the tests of this topic (see the module comment). */
export function messageTests({ describe, test, insert, get }: SuiteContext): void {
  describe('insertMessages and lookups', () => {
    test('stores a message as queued with empty parts and no callback', async (storage) => {
      const message = buildNewMessage({
        smsCount: 3,
        encoding: 'UCS-2',
        endpoint: 'premium',
        recipientField: 'to',
        referenceField: 'message_id',
        messageType: 2,
        reqType: 5,
        callbackUrl: 'https://client.example/dlr',
        callbackSecret: 'whsec_c2VjcmV0',
        text: 'Habari \u00e9\u4f60\u597d',
        priority: 'transactional',
        weight: 3,
      });
      await insert(storage, message);
      const record = await get(storage, message);
      // The weight orders claims; it is read when the message is stored, not kept on the record.
      const { weight: _weight, ...accepted } = message;
      // The times are optional fields: an adapter that keeps none (without scheduled sends) leaves them out.
      const times = 'sendAt' in record || 'validUntil' in record ? { sendAt: null, validUntil: null } : {};
      const expected: MessageRecord = {
        ...times,
        ...accepted,
        state: 'queued',
        statusReason: null,
        statusDescription: null,
        attempts: 0,
        lastError: null,
        updatedAt: message.createdAt,
        parts: [0, 1, 2].map((index) => ({ index, carrierId: null, outcome: null })),
        callback: null,
      };
      assert.deepEqual(record, expected);
    });

    test('getMessage is scoped to the principal and null for an unknown ref', async (storage) => {
      const [message] = await insert(storage, buildNewMessage({ principalId: 'alice' }));
      assert.equal(await storage.getMessage('bob', message!.ref), null);
      assert.equal(await storage.getMessage('alice', 'no-such-ref'), null);
      assert.equal((await storage.getMessage('alice', message!.ref))?.ref, message!.ref);
    });

    test('findByExternalId returns every message with the id, newest first, scoped and limited', async (storage) => {
      const older = buildNewMessage({ externalId: 'same', createdAt: T0 });
      const newer = buildNewMessage({ externalId: 'same', createdAt: T0 + 5 });
      const newest = buildNewMessage({ externalId: 'same', createdAt: T0 + 9 });
      const other = buildNewMessage({ externalId: 'other', createdAt: T0 + 1 });
      const foreign = buildNewMessage({ externalId: 'same', principalId: 'someone-else', createdAt: T0 + 20 });
      await insert(storage, older, newer);
      await insert(storage, newest, other, foreign);
      assert.deepEqual(refsOf(await storage.findByExternalId('principal-a', 'same', 10)), [
        newest.ref,
        newer.ref,
        older.ref,
      ]);
      assert.deepEqual(refsOf(await storage.findByExternalId('principal-a', 'same', 2)), [newest.ref, newer.ref]);
      assert.deepEqual(await storage.findByExternalId('principal-b', 'same', 10), []);
      assert.deepEqual(await storage.findByExternalId('principal-a', 'missing', 10), []);
    });

    test('the same external id twice gives two messages', async (storage) => {
      const first = buildNewMessage({ externalId: 'dup' });
      const second = buildNewMessage({ externalId: 'dup' });
      await insert(storage, first);
      await insert(storage, second);
      const found = await storage.findByExternalId('principal-a', 'dup', 10);
      assert.equal(found.length, 2);
      assert.deepEqual(new Set(refsOf(found)), new Set([first.ref, second.ref]));
    });

    test('a batch with a ref that already exists throws and stores none of the batch', async (storage) => {
      const existing = buildNewMessage();
      await insert(storage, existing);
      const fresh = buildNewMessage({ externalId: 'batch' });
      const clash = buildNewMessage({ ref: existing.ref, externalId: 'batch', text: 'clash' });
      const after = buildNewMessage({ externalId: 'batch' });
      await assert.rejects(storage.insertMessages([fresh, clash, after]));
      assert.equal(await storage.getMessage('principal-a', fresh.ref), null);
      assert.equal(await storage.getMessage('principal-a', after.ref), null);
      assert.equal((await get(storage, existing)).text, existing.text);
      assert.deepEqual(await storage.findByExternalId('principal-a', 'batch', 10), []);
    });

    test('a batch repeating a ref within itself throws and stores none of it', async (storage) => {
      const first = buildNewMessage();
      const again = { ...first, text: 'again' };
      await assert.rejects(storage.insertMessages([first, again]));
      assert.equal(await storage.getMessage('principal-a', first.ref), null);
    });

    test('an empty batch is accepted and stores nothing', async (storage) => {
      await storage.insertMessages([]);
      assert.deepEqual(await storage.claimMessages({ owner: 'w', limit: 10, leaseMs: LEASE, now: T0 }), []);
    });

    test('records are copies: mutating what goes in or comes out changes nothing stored', async (storage) => {
      const message = buildNewMessage({ smsCount: 2 });
      await storage.insertMessages([message]);
      message.text = 'changed after insert';
      const record = await get(storage, { ...message });
      record.state = 'delivered';
      record.parts[0]!.carrierId = 'mutated';
      record.parts.pop();
      const again = await get(storage, message);
      assert.equal(again.text, 'Hello');
      assert.equal(again.state, 'queued');
      assert.deepEqual(again.parts, [
        { index: 0, carrierId: null, outcome: null },
        { index: 1, carrierId: null, outcome: null },
      ]);
    });
  });
}

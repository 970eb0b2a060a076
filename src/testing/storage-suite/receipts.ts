/**
 * The storage contract suite's tests of one topic. Applying delivery receipts: matching a
 * part by any spelling of its carrier id, folding multipart outcomes, and telling unknown,
 * duplicate, late and partial receipts apart. Kept as a topic of its own because receipts
 * arrive out of order, twice, for parts not yet recorded and for messages already ended,
 * and each of those must leave the message right.
 */
import assert from 'node:assert/strict';
import type { SuiteContext } from './context.js';
import { buildNewMessage, DELIVERED, EXPIRED, LEASE, receipt, refsOf, T0, UNDELIVERED } from './fixtures.js';

/** Registers the tests of this topic (see the module comment). */
export function receiptTests({ describe, test, insert, get, submitAll }: SuiteContext): void {
  describe('applyReceipt', () => {
    test('is unknown when no part has the carrier id', async (storage) => {
      await insert(storage, buildNewMessage());
      assert.deepEqual(await storage.applyReceipt(receipt(['nope', 'NOPE'])), { kind: 'unknown' });
    });

    test('makes a single-part message terminal, then reports a repeat as duplicate', async (storage) => {
      const [message] = await insert(storage, buildNewMessage());
      await submitAll(storage, message!);
      const result = await storage.applyReceipt(receipt(`${message!.ref}-c0`, DELIVERED, T0 + 500));
      assert.equal(result.kind, 'terminal');
      assert.ok(result.kind === 'terminal');
      assert.equal(result.ref, message!.ref);
      assert.equal(result.transition.previousState, 'submitted');
      assert.equal(result.transition.message.state, 'delivered');
      assert.equal(result.transition.message.statusReason, 'delivered_to_terminal');
      assert.equal(result.transition.message.statusDescription, DELIVERED.description);
      assert.equal(result.transition.message.updatedAt, T0 + 500);
      assert.deepEqual(result.transition.message.parts[0]!.outcome, DELIVERED);
      assert.equal(result.transition.message.callback, null);

      const repeat = await storage.applyReceipt(receipt(`${message!.ref}-c0`, UNDELIVERED, T0 + 600));
      assert.deepEqual(repeat, { kind: 'duplicate', ref: message!.ref });
      const record = await get(storage, message!);
      assert.equal(record.state, 'delivered');
      assert.deepEqual(record.parts[0]!.outcome, DELIVERED);
      assert.equal(record.updatedAt, T0 + 500);
    });

    test('is late for a message the worker already ended, which keeps its state', async (storage) => {
      const [message] = await insert(storage, buildNewMessage({ callbackUrl: 'https://client.example/dlr' }));
      await submitAll(storage, message!);
      await storage.finish(message!.ref, EXPIRED, T0 + 20);
      const result = await storage.applyReceipt(receipt(`${message!.ref}-c0`, DELIVERED, T0 + 30));
      assert.deepEqual(result, { kind: 'late', ref: message!.ref });
      const record = await get(storage, message!);
      assert.deepEqual(
        record.parts[0]!.outcome,
        DELIVERED,
        "the late receipt's outcome is kept on its part (rule: a `late` receipt records the part's outcome and changes nothing else; the status endpoint shows it, and a repeat is then a `duplicate`)",
      );
      assert.deepEqual(await storage.applyReceipt(receipt(`${message!.ref}-c0`, DELIVERED, T0 + 40)), { kind: 'duplicate', ref: message!.ref }, 'a repeat of a late receipt is a duplicate');
      assert.equal(record.state, 'expired');
      assert.equal(record.statusReason, 'expired');
      assert.equal(record.updatedAt, T0 + 20);
      const due = await storage.claimCallbacks({ owner: 'd', limit: 10, leaseMs: LEASE, now: T0 + 100 });
      assert.equal(due.length, 1, 'one report, from finish, none from the late receipt');
    });

    test('tries the spellings in order and uses the first one that is stored', async (storage) => {
      const [one, two] = await insert(storage, buildNewMessage(), buildNewMessage());
      await storage.recordSubmission(one!.ref, 0, '0a1b', T0 + 1);
      await storage.recordSubmission(two!.ref, 0, '2587', T0 + 1);
      const result = await storage.applyReceipt(receipt(['unknown-spelling', '2587', '0a1b']));
      assert.equal(result.kind, 'terminal');
      assert.ok(result.kind === 'terminal');
      assert.equal(result.ref, two!.ref);
      assert.equal((await get(storage, one!)).state, 'submitted');
    });

    test('a multipart message is delivered only when every part is', async (storage) => {
      const [message] = await insert(storage, buildNewMessage({ smsCount: 3 }));
      const ids = await submitAll(storage, message!);
      assert.deepEqual(await storage.applyReceipt(receipt(ids[1]!, DELIVERED, T0 + 100)), { kind: 'part', ref: message!.ref });
      assert.deepEqual(await storage.applyReceipt(receipt(ids[0]!, DELIVERED, T0 + 101)), { kind: 'part', ref: message!.ref });
      const mid = await get(storage, message!);
      assert.equal(mid.state, 'submitted');
      assert.deepEqual(mid.parts.map((part) => part.outcome), [DELIVERED, DELIVERED, null]);
      const last = await storage.applyReceipt(receipt(ids[2]!, DELIVERED, T0 + 102));
      assert.equal(last.kind, 'terminal');
      assert.equal((await get(storage, message!)).state, 'delivered');
    });

    test('a part keeps when it was submitted and when its receipt came, when the storage keeps part times', async (storage, skip) => {
      const [message] = await insert(storage, buildNewMessage({ smsCount: 2 }));
      await storage.recordSubmission(message!.ref, 0, 'timed-0', T0 + 1);
      await storage.recordSubmission(message!.ref, 1, 'timed-1', T0 + 2);
      const submitted = await get(storage, message!);
      if (submitted.parts[0]!.submittedAt === undefined) {
        skip('the storage keeps no part times (optional: the status answer shows them as null)');
        return;
      }
      assert.deepEqual(submitted.parts.map((part) => [part.submittedAt, part.endedAt]), [[T0 + 1, null], [T0 + 2, null]], 'a submission sets the part\u2019s submittedAt');
      await storage.applyReceipt(receipt('timed-1', DELIVERED, T0 + 50));
      await storage.applyReceipt(receipt('timed-0', UNDELIVERED, T0 + 60));
      const ended = await get(storage, message!);
      assert.deepEqual(ended.parts.map((part) => [part.submittedAt, part.endedAt]), [[T0 + 1, T0 + 60], [T0 + 2, T0 + 50]], 'a receipt sets the part\u2019s endedAt, keeping its submittedAt');
    });

    test('a failed part makes the whole multipart message fail with that part\u2019s outcome', async (storage) => {
      const [message] = await insert(storage, buildNewMessage({ smsCount: 3 }));
      const ids = await submitAll(storage, message!);
      await storage.applyReceipt(receipt(ids[0]!, DELIVERED));
      await storage.applyReceipt(receipt(ids[2]!, EXPIRED));
      const result = await storage.applyReceipt(receipt(ids[1]!, UNDELIVERED));
      assert.ok(result.kind === 'terminal');
      // The first part by index that was not delivered decides.
      assert.equal(result.transition.message.state, 'undelivered');
      assert.equal(result.transition.message.statusReason, 'absent_subscriber');
    });

    test('a receipt for a part of a still-queued message is kept until the others are in', async (storage) => {
      const [message] = await insert(storage, buildNewMessage({ smsCount: 2 }));
      await storage.recordSubmission(message!.ref, 0, 'early-0', T0 + 1);
      assert.deepEqual(await storage.applyReceipt(receipt('early-0')), { kind: 'part', ref: message!.ref });
      const mid = await get(storage, message!);
      assert.equal(mid.state, 'queued');
      assert.deepEqual(mid.parts[0]!.outcome, DELIVERED);
      assert.equal((await storage.recordSubmission(message!.ref, 1, 'early-1', T0 + 2)).kind, 'submitted');
      const result = await storage.applyReceipt(receipt('early-1'));
      assert.equal(result.kind, 'terminal');
      assert.equal((await get(storage, message!)).state, 'delivered');
    });

    test('a receipt making a message terminal creates its report only when it has a URL', async (storage) => {
      const [withUrl, without] = await insert(
        storage,
        buildNewMessage({ callbackUrl: 'https://client.example/dlr', smsCount: 2 }),
        buildNewMessage(),
      );
      const ids = await submitAll(storage, withUrl!);
      await submitAll(storage, without!);
      await storage.applyReceipt(receipt(ids[0]!, DELIVERED, T0 + 200));
      assert.equal((await get(storage, withUrl!)).callback, null, 'no report before the message is terminal');
      const result = await storage.applyReceipt(receipt(ids[1]!, DELIVERED, T0 + 201));
      assert.ok(result.kind === 'terminal');
      assert.deepEqual(result.transition.message.callback, {
        state: 'pending',
        attempts: 0,
        lastStatusCode: null,
        lastError: null,
        nextAttemptAt: T0 + 201,
      });
      assert.equal((await storage.applyReceipt(receipt(`${without!.ref}-c0`))).kind, 'terminal');
      assert.equal((await get(storage, without!)).callback, null);
      const due = await storage.claimCallbacks({ owner: 'd', limit: 10, leaseMs: LEASE, now: T0 + 1_000 });
      assert.deepEqual(refsOf(due.map((callback) => callback.message)), [withUrl!.ref]);
    });
  });
}

/**
 * The storage contract suite: every {@link Storage} adapter, the bundled ones and a host's
 * own, runs it to show it keeps the promises of `storage/contract.ts`. Runner-agnostic:
 * the caller passes its runner's `describe` and `it`; assertions use `node:assert/strict`.
 */
import assert from 'node:assert/strict';
import { outcome } from '../lifecycle/states.js';
import type { MessageRecord, NewMessage, PartReceipt, Storage } from '../storage/contract.js';

/** The two functions of a test runner the suite needs (vitest, node:test, jest, mocha). */
export interface StorageSuiteHarness {
  /** Groups tests, like the runner's `describe`. */
  describe: (name: string, fn: () => void) => void;
  /** Declares one test, like the runner's `it`; the suite's tests are async. */
  it: (name: string, fn: () => Promise<void> | void) => void;
}

/** How the suite makes and disposes of the storage under test. */
export interface StorageSuiteOptions {
  /** Name shown in the describe block. */
  name: string;
  /** Makes a new, EMPTY storage for one test (ready() is called by the suite). */
  create: () => Promise<Storage>;
  /** Disposes of one made by create (the suite calls storage.close?.() first). */
  destroy?: (storage: Storage) => Promise<void>;
}

/** A fixed epoch-ms start time, so tests never read the clock. */
const T0 = 1_700_000_000_000;

let refCounter = 0;

/**
 * Builds a valid {@link NewMessage} (single part, no callback, accepted at a fixed time)
 * with `overrides` applied; each call gets a fresh unique `ref` unless one is given.
 */
export function buildNewMessage(overrides: Partial<NewMessage> = {}): NewMessage {
  refCounter += 1;
  return {
    ref: `ref-${process.pid}-${refCounter}-${Math.random().toString(36).slice(2, 10)}`,
    principalId: 'principal-a',
    endpoint: 'quick',
    profileCode: 'PROFILE1',
    sender: 'SENDER',
    recipient: '254700000001',
    text: 'Hello',
    messageType: 1,
    reqType: 1,
    externalId: 'ext-1',
    recipientField: 'recipient',
    referenceField: 'external_id',
    smsCount: 1,
    encoding: 'GSM-7',
    callbackUrl: null,
    callbackSecret: null,
    createdAt: T0,
    ...overrides,
  };
}

const DELIVERED = outcome('delivered', 'delivered_to_terminal');
const UNDELIVERED = outcome('undelivered', 'absent_subscriber');
const EXPIRED = outcome('expired', 'expired');
const FAILED = outcome('failed', 'unknown', 'Gave up after 5 attempts');
const LEASE = 30_000;

function receipt(carrierIds: string | readonly string[], result = DELIVERED, now = T0 + 100): PartReceipt {
  return { carrierIds: typeof carrierIds === 'string' ? [carrierIds] : carrierIds, outcome: result, now };
}

function refsOf(records: readonly { ref: string }[]): string[] {
  return records.map((record) => record.ref);
}

/**
 * Registers the contract tests for one adapter with the given runner.
 *
 * Each test gets its own storage from `options.create`, calls `ready()`, and afterwards
 * `close()` and `options.destroy`. Times are fixed epoch-ms values passed in; the suite
 * never waits on the clock.
 */
export function runStorageContract(harness: StorageSuiteHarness, options: StorageSuiteOptions): void {
  const { describe, it } = harness;

  /** One test with a fresh, ready storage that is disposed of whatever happens. */
  const test = (name: string, fn: (storage: Storage) => Promise<void>): void => {
    it(name, async () => {
      const storage = await options.create();
      try {
        await storage.ready?.();
        await fn(storage);
      } finally {
        try {
          await storage.close?.();
        } finally {
          await options.destroy?.(storage);
        }
      }
    });
  };

  /** Inserts and returns the messages. */
  const insert = async (storage: Storage, ...messages: NewMessage[]): Promise<NewMessage[]> => {
    await storage.insertMessages(messages);
    return messages;
  };

  const get = async (storage: Storage, message: NewMessage): Promise<MessageRecord> => {
    const record = await storage.getMessage(message.principalId, message.ref);
    assert.ok(record, `message ${message.ref} should be stored`);
    return record;
  };

  /** Claims, submits every part and returns the carrier ids (`<ref>-<index>`). */
  const submitAll = async (storage: Storage, message: NewMessage, now = T0 + 10): Promise<string[]> => {
    const ids: string[] = [];
    for (let index = 0; index < message.smsCount; index++) {
      const id = `${message.ref}-c${index}`;
      ids.push(id);
      await storage.recordSubmission(message.ref, index, id, now);
    }
    return ids;
  };

  describe(`storage contract: ${options.name}`, () => {
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
        });
        await insert(storage, message);
        const record = await get(storage, message);
        const expected: MessageRecord = {
          ...message,
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

    describe('claimMessages', () => {
      test('claims only messages that are due', async (storage) => {
        const now = buildNewMessage({ createdAt: T0 });
        const later = buildNewMessage({ createdAt: T0 + 1_000 });
        await insert(storage, now, later);
        const first = await storage.claimMessages({ owner: 'w1', limit: 10, leaseMs: LEASE, now: T0 });
        assert.deepEqual(refsOf(first), [now.ref]);
        const second = await storage.claimMessages({ owner: 'w1', limit: 10, leaseMs: LEASE, now: T0 + 1_000 });
        assert.deepEqual(refsOf(second), [later.ref]);
      });

      test('claims oldest first (createdAt, then insertion order) and at most limit', async (storage) => {
        const c = buildNewMessage({ createdAt: T0 + 30 });
        const a1 = buildNewMessage({ createdAt: T0 + 10 });
        const a2 = buildNewMessage({ createdAt: T0 + 10 });
        const b = buildNewMessage({ createdAt: T0 + 20 });
        const z = buildNewMessage({ createdAt: T0 });
        await insert(storage, c, a1, a2);
        await insert(storage, b);
        await insert(storage, z);
        const claimed = await storage.claimMessages({ owner: 'w', limit: 3, leaseMs: LEASE, now: T0 + 100 });
        assert.deepEqual(refsOf(claimed), [z.ref, a1.ref, a2.ref]);
        const rest = await storage.claimMessages({ owner: 'w', limit: 3, leaseMs: LEASE, now: T0 + 100 });
        assert.deepEqual(refsOf(rest), [b.ref, c.ref]);
        assert.deepEqual(await storage.claimMessages({ owner: 'w', limit: 3, leaseMs: LEASE, now: T0 + 100 }), []);
      });

      test('a live lease excludes another claimer; an expired one lets another owner re-claim', async (storage) => {
        const [message] = await insert(storage, buildNewMessage());
        const first = await storage.claimMessages({ owner: 'w1', limit: 10, leaseMs: LEASE, now: T0 });
        assert.deepEqual(refsOf(first), [message!.ref]);
        assert.equal(first[0]!.state, 'queued');
        const during = await storage.claimMessages({ owner: 'w2', limit: 10, leaseMs: LEASE, now: T0 + LEASE - 1 });
        assert.deepEqual(during, []);
        const after = await storage.claimMessages({ owner: 'w2', limit: 10, leaseMs: LEASE, now: T0 + LEASE + 1 });
        assert.deepEqual(refsOf(after), [message!.ref]);
        const third = await storage.claimMessages({ owner: 'w1', limit: 10, leaseMs: LEASE, now: T0 + LEASE + 2 });
        assert.deepEqual(third, []);
      });

      test('messages stored under a lease are claimed by no one until it ends, then like any other', async (storage) => {
        const leased = [buildNewMessage({ createdAt: T0 }), buildNewMessage({ createdAt: T0 })];
        const free = buildNewMessage({ createdAt: T0 + 1 });
        // Two requests in the same turn, one leased and one not: adapters that write the
        // inserts of a turn together keep each one's lease to its own messages.
        await Promise.all([
          storage.insertMessages(leased, { owner: 'accepting', until: T0 + LEASE }),
          storage.insertMessages([free]),
        ]);
        const during = await storage.claimMessages({ owner: 'other', limit: 10, leaseMs: LEASE, now: T0 + 10 });
        assert.deepEqual(refsOf(during), [free.ref]);
        assert.equal((await get(storage, leased[0]!)).state, 'queued');
        assert.deepEqual(await storage.claimMessages({ owner: 'other', limit: 10, leaseMs: LEASE, now: T0 + LEASE - 1 }), []);
        const after = await storage.claimMessages({ owner: 'other', limit: 10, leaseMs: LEASE, now: T0 + LEASE });
        assert.deepEqual(refsOf(after), refsOf(leased));
      });

      test('the owner of a lease taken at insert submits and ends the message as if it had claimed it', async (storage) => {
        const message = buildNewMessage({ createdAt: T0 });
        await storage.insertMessages([message], { owner: 'accepting', until: T0 + LEASE });
        const submitted = await storage.recordSubmission(message.ref, 0, 'leased-at-insert', T0 + 5);
        assert.equal(submitted.kind, 'submitted');
        assert.equal(submitted.kind === 'submitted' && submitted.transition.message.parts[0]!.carrierId, 'leased-at-insert');
        const delivered = await storage.applyReceipt(receipt('leased-at-insert', DELIVERED, T0 + 6));
        assert.equal(delivered.kind === 'terminal' && delivered.transition.message.state, 'delivered');
        // Submitted, the message is no longer queued: the ended lease brings no claim.
        assert.deepEqual(await storage.claimMessages({ owner: 'other', limit: 10, leaseMs: LEASE, now: T0 + 2 * LEASE }), []);
      });

      test('claimed messages come with their parts, submitted ones included', async (storage) => {
        const [message] = await insert(storage, buildNewMessage({ smsCount: 3 }));
        await storage.claimMessages({ owner: 'w1', limit: 1, leaseMs: LEASE, now: T0 });
        assert.deepEqual(await storage.recordSubmission(message!.ref, 1, 'carrier-1', T0 + 1), {
          kind: 'part',
          ref: message!.ref,
        });
        const reclaimed = await storage.claimMessages({ owner: 'w2', limit: 1, leaseMs: LEASE, now: T0 + LEASE + 1 });
        assert.equal(reclaimed.length, 1);
        assert.deepEqual(reclaimed[0]!.parts, [
          { index: 0, carrierId: null, outcome: null },
          { index: 1, carrierId: 'carrier-1', outcome: null },
          { index: 2, carrierId: null, outcome: null },
        ]);
      });

      test('only queued messages are claimed', async (storage) => {
        const submitted = buildNewMessage({ createdAt: T0 });
        const finished = buildNewMessage({ createdAt: T0 + 1 });
        const queued = buildNewMessage({ createdAt: T0 + 2 });
        await insert(storage, submitted, finished, queued);
        await submitAll(storage, submitted);
        await storage.finish(finished.ref, FAILED, T0 + 10);
        const claimed = await storage.claimMessages({ owner: 'w', limit: 10, leaseMs: LEASE, now: T0 + 100 });
        assert.deepEqual(refsOf(claimed), [queued.ref]);
      });

      test('two concurrent claimers get disjoint sets that cover all messages', async (storage) => {
        const messages = Array.from({ length: 50 }, (_, i) => buildNewMessage({ createdAt: T0 + i }));
        await storage.insertMessages(messages);
        const [a, b] = await Promise.all([
          storage.claimMessages({ owner: 'a', limit: 30, leaseMs: LEASE, now: T0 + 100 }),
          storage.claimMessages({ owner: 'b', limit: 30, leaseMs: LEASE, now: T0 + 100 }),
        ]);
        const refsA = refsOf(a);
        const refsB = refsOf(b);
        const overlap = refsA.filter((ref) => refsB.includes(ref));
        assert.deepEqual(overlap, [], 'no message may be leased to both claimers');
        assert.deepEqual(new Set([...refsA, ...refsB]), new Set(refsOf(messages)));
      });
    });

    describe('recordSubmission', () => {
      test('the only part moves the message to submitted and ends its lease', async (storage) => {
        const [message] = await insert(storage, buildNewMessage());
        await storage.claimMessages({ owner: 'w', limit: 1, leaseMs: LEASE, now: T0 });
        const result = await storage.recordSubmission(message!.ref, 0, 'abc123', T0 + 5);
        assert.equal(result.kind, 'submitted');
        assert.ok(result.kind === 'submitted');
        assert.equal(result.transition.previousState, 'queued');
        assert.equal(result.transition.message.state, 'submitted');
        assert.equal(result.transition.message.updatedAt, T0 + 5);
        assert.deepEqual(result.transition.message.parts, [{ index: 0, carrierId: 'abc123', outcome: null }]);
        const record = await get(storage, message!);
        assert.equal(record.state, 'submitted');
        assert.deepEqual(await storage.claimMessages({ owner: 'w2', limit: 1, leaseMs: LEASE, now: T0 + 2 * LEASE }), []);
      });

      test('a multipart message is submitted only with its last part', async (storage) => {
        const [message] = await insert(storage, buildNewMessage({ smsCount: 3 }));
        assert.deepEqual(await storage.recordSubmission(message!.ref, 2, 'c2', T0 + 1), { kind: 'part', ref: message!.ref });
        assert.deepEqual(await storage.recordSubmission(message!.ref, 0, 'c0', T0 + 2), { kind: 'part', ref: message!.ref });
        assert.equal((await get(storage, message!)).state, 'queued');
        const last = await storage.recordSubmission(message!.ref, 1, 'c1', T0 + 3);
        assert.equal(last.kind, 'submitted');
        assert.deepEqual(
          (await get(storage, message!)).parts.map((part) => part.carrierId),
          ['c0', 'c1', 'c2'],
        );
      });

      test('is stale for a terminal message or an unknown ref, yet a receipt for it is matched as late', async (storage) => {
        const [message] = await insert(storage, buildNewMessage());
        await storage.finish(message!.ref, FAILED, T0 + 1);
        assert.deepEqual(await storage.recordSubmission(message!.ref, 0, 'late-id', T0 + 2), {
          kind: 'stale',
          ref: message!.ref,
        });
        assert.equal((await storage.recordSubmission('no-such-ref', 0, 'x', T0 + 2)).kind, 'stale');
        assert.deepEqual(await storage.applyReceipt(receipt('late-id')), { kind: 'late', ref: message!.ref });
        const record = await get(storage, message!);
        assert.equal(record.state, 'failed');
        assert.equal(record.statusDescription, FAILED.description);
      });

      test('a part submitted twice keeps every carrier id it was given', async (storage) => {
        const [message] = await insert(storage, buildNewMessage({ smsCount: 2 }));
        await storage.recordSubmission(message!.ref, 0, 'first-owner', T0 + 1);
        assert.equal((await storage.recordSubmission(message!.ref, 0, 'second-owner', T0 + 2)).kind, 'part');
        assert.equal((await get(storage, message!)).parts[0]!.carrierId, 'second-owner');
        assert.equal((await storage.recordSubmission(message!.ref, 1, 'other-part', T0 + 3)).kind, 'submitted');
        assert.deepEqual(await storage.applyReceipt(receipt('first-owner')), { kind: 'part', ref: message!.ref });
        assert.deepEqual(await storage.applyReceipt(receipt('second-owner')), { kind: 'duplicate', ref: message!.ref });
      });
    });

    describe('reschedule', () => {
      test('counts the attempt, keeps the error, ends the lease and delays the message', async (storage) => {
        const [message] = await insert(storage, buildNewMessage());
        await storage.claimMessages({ owner: 'w1', limit: 1, leaseMs: LEASE, now: T0 });
        await storage.reschedule(message!.ref, T0 + 5_000, 'carrier throttled', T0 + 10);
        const record = await get(storage, message!);
        assert.equal(record.state, 'queued');
        assert.equal(record.attempts, 1);
        assert.equal(record.lastError, 'carrier throttled');
        assert.deepEqual(await storage.claimMessages({ owner: 'w2', limit: 1, leaseMs: LEASE, now: T0 + 4_999 }), []);
        // Due before the first lease would have run out: the lease ended with the reschedule.
        const again = await storage.claimMessages({ owner: 'w2', limit: 1, leaseMs: LEASE, now: T0 + 5_000 });
        assert.deepEqual(refsOf(again), [message!.ref]);
        assert.equal(again[0]!.attempts, 1);
        await storage.reschedule(message!.ref, T0 + 9_000, 'again', T0 + 5_010);
        assert.equal((await get(storage, message!)).attempts, 2);
      });

      test('does nothing to a message that is no longer queued', async (storage) => {
        const [message] = await insert(storage, buildNewMessage());
        await storage.finish(message!.ref, FAILED, T0 + 1);
        await storage.reschedule(message!.ref, T0 + 5_000, 'too late', T0 + 2);
        const record = await get(storage, message!);
        assert.equal(record.state, 'failed');
        assert.equal(record.attempts, 0);
        assert.deepEqual(await storage.claimMessages({ owner: 'w', limit: 1, leaseMs: LEASE, now: T0 + 10_000 }), []);
      });
    });

    describe('finish', () => {
      test('ends a queued message once; a second finish returns null and changes nothing', async (storage) => {
        const [message] = await insert(storage, buildNewMessage());
        const transition = await storage.finish(message!.ref, FAILED, T0 + 7);
        assert.ok(transition);
        assert.equal(transition.previousState, 'queued');
        assert.equal(transition.message.state, 'failed');
        assert.equal(transition.message.statusReason, 'unknown');
        assert.equal(transition.message.statusDescription, FAILED.description);
        assert.equal(transition.message.updatedAt, T0 + 7);
        assert.equal(transition.message.callback, null);
        assert.equal(await storage.finish(message!.ref, outcome('rejected', 'rejected'), T0 + 8), null);
        const record = await get(storage, message!);
        assert.equal(record.state, 'failed');
        assert.equal(record.updatedAt, T0 + 7);
        assert.equal(record.callback, null);
        assert.deepEqual(await storage.claimCallbacks({ owner: 'd', limit: 10, leaseMs: LEASE, now: T0 + 100 }), []);
      });

      test('ends a submitted message', async (storage) => {
        const [message] = await insert(storage, buildNewMessage());
        await submitAll(storage, message!);
        const transition = await storage.finish(message!.ref, EXPIRED, T0 + 50);
        assert.equal(transition?.previousState, 'submitted');
        assert.equal(transition?.message.state, 'expired');
      });

      test('creates the pending delivery report with the terminal state when there is a URL', async (storage) => {
        const [message] = await insert(storage, buildNewMessage({ callbackUrl: 'https://client.example/dlr' }));
        const transition = await storage.finish(message!.ref, FAILED, T0 + 7);
        const pending = { state: 'pending', attempts: 0, lastStatusCode: null, lastError: null, nextAttemptAt: T0 + 7 };
        assert.deepEqual(transition?.message.callback, pending);
        assert.deepEqual((await get(storage, message!)).callback, pending);
        const due = await storage.claimCallbacks({ owner: 'd', limit: 10, leaseMs: LEASE, now: T0 + 7 });
        assert.equal(due.length, 1);
        assert.equal(typeof due[0]!.uid, 'string');
        assert.ok(due[0]!.uid.length > 0);
        assert.equal(due[0]!.attempts, 0);
        assert.equal(due[0]!.message.ref, message!.ref);
        assert.equal(due[0]!.message.state, 'failed');
      });

      test('returns null for an unknown ref', async (storage) => {
        assert.equal(await storage.finish('no-such-ref', FAILED, T0), null);
      });
    });

    describe('expireOverdue', () => {
      test('ends only submitted messages unchanged since before the cut-off, oldest first, up to the limit', async (storage) => {
        const NO_RECEIPT = outcome('expired', 'unknown', 'No receipt');
        const [early, later, recent, queued] = await insert(
          storage,
          buildNewMessage({ callbackUrl: 'https://client.example/dlr' }),
          buildNewMessage(),
          buildNewMessage(),
          buildNewMessage(),
        );
        await submitAll(storage, early!, T0 + 10);
        await submitAll(storage, later!, T0 + 20);
        await submitAll(storage, recent!, T0 + 500);
        const first = await storage.expireOverdue(T0 + 100, 1, NO_RECEIPT, T0 + 1000);
        assert.deepEqual(first.map((t) => [t.message.ref, t.previousState, t.message.state, t.message.statusReason]), [
          [early!.ref, 'submitted', 'expired', 'unknown'],
        ]);
        assert.equal(first[0]!.message.callback?.state, 'pending');
        const rest = await storage.expireOverdue(T0 + 100, 10, NO_RECEIPT, T0 + 1000);
        assert.deepEqual(rest.map((t) => t.message.ref), [later!.ref]);
        assert.deepEqual(await storage.expireOverdue(T0 + 100, 10, NO_RECEIPT, T0 + 1000), []);
        assert.equal((await get(storage, recent!)).state, 'submitted');
        assert.equal((await get(storage, queued!)).state, 'queued');
        // A late receipt for an expired message changes nothing.
        const late = await storage.applyReceipt(receipt(`${early!.ref}-c0`));
        assert.equal(late.kind, 'late');
        assert.equal((await get(storage, early!)).state, 'expired');
      });
    });

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

    describe('delivery reports', () => {
      /** Ends `count` messages with URLs at T0+10, T0+20, ... and returns them in that order. */
      const endWithReports = async (storage: Storage, count: number): Promise<NewMessage[]> => {
        const messages = Array.from({ length: count }, () => buildNewMessage({ callbackUrl: 'https://client.example/dlr' }));
        await storage.insertMessages(messages);
        // Ended in reverse insertion order, so due order differs from insertion order.
        for (let i = count - 1; i >= 0; i--) await storage.finish(messages[i]!.ref, FAILED, T0 + 10 * (count - i));
        return messages.reverse();
      };

      test('claims due reports oldest due first, at most limit, and leases them', async (storage) => {
        const messages = await endWithReports(storage, 3);
        assert.deepEqual(await storage.claimCallbacks({ owner: 'd1', limit: 10, leaseMs: LEASE, now: T0 + 9 }), []);
        const first = await storage.claimCallbacks({ owner: 'd1', limit: 2, leaseMs: LEASE, now: T0 + 30 });
        assert.deepEqual(refsOf(first.map((callback) => callback.message)), [messages[0]!.ref, messages[1]!.ref]);
        const second = await storage.claimCallbacks({ owner: 'd2', limit: 10, leaseMs: LEASE, now: T0 + 40 });
        assert.deepEqual(refsOf(second.map((callback) => callback.message)), [messages[2]!.ref]);
        assert.deepEqual(await storage.claimCallbacks({ owner: 'd3', limit: 10, leaseMs: LEASE, now: T0 + 50 }), []);
        // The first claimer crashed: its reports come back, with the same uid, after the lease.
        const retaken = await storage.claimCallbacks({ owner: 'd3', limit: 10, leaseMs: LEASE, now: T0 + 30 + LEASE + 1 });
        assert.deepEqual(
          retaken.map((callback) => callback.uid),
          first.map((callback) => callback.uid),
        );
      });

      test('deferred reports come back at the given time, with no attempt counted', async (storage) => {
        const [message, other] = await endWithReports(storage, 2);
        const claimed = await storage.claimCallbacks({ owner: 'd', limit: 2, leaseMs: LEASE, now: T0 + 100 });
        assert.equal(claimed.length, 2);
        const deferred = claimed.find((c) => c.message.ref === message!.ref)!;
        await storage.deferCallbacks([deferred.uid], T0 + 105);
        assert.deepEqual(await storage.claimCallbacks({ owner: 'e', limit: 10, leaseMs: LEASE, now: T0 + 104 }), []);
        const back = await storage.claimCallbacks({ owner: 'e', limit: 10, leaseMs: LEASE, now: T0 + 105 });
        assert.deepEqual(back.map((c) => [c.uid, c.attempts]), [[deferred.uid, 0]]);
        // The other report keeps its full lease.
        assert.equal((await get(storage, other!)).callback?.attempts, 0);
        assert.deepEqual(await storage.claimCallbacks({ owner: 'e', limit: 10, leaseMs: LEASE, now: T0 + 106 }), []);
        await storage.deferCallbacks([], T0);
      });

      test('a receipt with a report lease stores the report leased to its owner until the lease ends', async (storage) => {
        const url = 'https://client.example/dlr';
        const [leased, plain, noUrl] = await insert(storage, buildNewMessage({ callbackUrl: url }), buildNewMessage({ callbackUrl: url }), buildNewMessage());
        const [leasedId] = await submitAll(storage, leased!);
        const [plainId] = await submitAll(storage, plain!);
        const [noUrlId] = await submitAll(storage, noUrl!);
        const lease = { owner: 'applying', until: T0 + 200 + LEASE };
        // In the same turn, one leased and one not: adapters that write a turn's receipts
        // together keep each lease to its own report.
        const [fromLeased, fromPlain, fromNoUrl] = await Promise.all([
          storage.applyReceipt({ ...receipt(leasedId!, DELIVERED, T0 + 200), reportLease: lease }),
          storage.applyReceipt(receipt(plainId!, DELIVERED, T0 + 200)),
          storage.applyReceipt({ ...receipt(noUrlId!, DELIVERED, T0 + 200), reportLease: lease }),
        ]);
        assert.ok(fromLeased.kind === 'terminal' && fromPlain.kind === 'terminal' && fromNoUrl.kind === 'terminal');
        assert.equal(fromPlain.transition.leasedReport, undefined, 'no lease asked, none taken');
        assert.equal(fromNoUrl.transition.leasedReport, undefined, 'no URL, no report');
        const report = fromLeased.transition.leasedReport;
        const during = await storage.claimCallbacks({ owner: 'other', limit: 10, leaseMs: LEASE, now: T0 + 201 });
        if (report === undefined) {
          // The contract lets an adapter decline the lease: its report is then claimable at once.
          assert.deepEqual(refsOf(during.map((c) => c.message)).sort(), [leased!.ref, plain!.ref].sort());
          return;
        }
        assert.equal(report.until, lease.until);
        assert.deepEqual(fromLeased.transition.message.callback, {
          state: 'pending',
          attempts: 0,
          lastStatusCode: null,
          lastError: null,
          nextAttemptAt: T0 + 200,
        });
        assert.deepEqual(refsOf(during.map((c) => c.message)), [plain!.ref]);
        assert.deepEqual(await storage.claimCallbacks({ owner: 'other', limit: 10, leaseMs: LEASE, now: lease.until - 1 }), []);
        // Its owner stopped: the lease ends and any instance claims the report, under its uid.
        const after = await storage.claimCallbacks({ owner: 'other', limit: 10, leaseMs: LEASE, now: lease.until });
        assert.deepEqual(after.map((c) => [c.uid, c.message.ref, c.attempts]), [[report.uid, leased!.ref, 0]]);
      });

      test('the owner of a report lease hands it back or records its attempt as if it had claimed it', async (storage) => {
        const messages = [buildNewMessage({ callbackUrl: 'https://client.example/a' }), buildNewMessage({ callbackUrl: 'https://client.example/b' })];
        await storage.insertMessages(messages);
        const reports = [];
        for (const message of messages) {
          const [id] = await submitAll(storage, message);
          const result = await storage.applyReceipt({ ...receipt(id!, DELIVERED, T0 + 200), reportLease: { owner: 'applying', until: T0 + 200 + LEASE } });
          assert.ok(result.kind === 'terminal');
          reports.push(result.transition.leasedReport);
        }
        const [sent, handedBack] = reports;
        // An adapter that declines the lease is covered by the test above.
        if (sent === undefined || handedBack === undefined) return;
        await storage.recordCallbackAttempt(sent.uid, { result: 'delivered', statusCode: 204, error: null, nextAttemptAt: null, now: T0 + 300 });
        assert.equal((await get(storage, messages[0]!)).callback?.state, 'delivered');
        await storage.deferCallbacks([handedBack.uid], T0 + 400);
        assert.deepEqual(await storage.claimCallbacks({ owner: 'other', limit: 10, leaseMs: LEASE, now: T0 + 399 }), []);
        const back = await storage.claimCallbacks({ owner: 'other', limit: 10, leaseMs: LEASE, now: T0 + 400 });
        assert.deepEqual(back.map((c) => [c.uid, c.message.ref]), [[handedBack.uid, messages[1]!.ref]]);
        // The delivered one never comes back; the handed-back one does, once its new claim's lease ends.
        const later = await storage.claimCallbacks({ owner: 'other', limit: 10, leaseMs: LEASE, now: T0 + 10 * LEASE });
        assert.deepEqual(later.map((c) => c.uid), [handedBack.uid]);
      });

      test('a delivered attempt ends the report', async (storage) => {
        const [message] = await endWithReports(storage, 1);
        const [due] = await storage.claimCallbacks({ owner: 'd', limit: 1, leaseMs: LEASE, now: T0 + 100 });
        await storage.recordCallbackAttempt(due!.uid, {
          result: 'delivered',
          statusCode: 204,
          error: null,
          nextAttemptAt: null,
          now: T0 + 101,
        });
        const callback = (await get(storage, message!)).callback;
        assert.equal(callback?.state, 'delivered');
        assert.equal(callback?.attempts, 1);
        assert.equal(callback?.lastStatusCode, 204);
        assert.equal(callback?.lastError, null);
        assert.deepEqual(await storage.claimCallbacks({ owner: 'd', limit: 1, leaseMs: LEASE, now: T0 + 10 * LEASE }), []);
      });

      test('a failed attempt gives the report up', async (storage) => {
        const [message] = await endWithReports(storage, 1);
        const [due] = await storage.claimCallbacks({ owner: 'd', limit: 1, leaseMs: LEASE, now: T0 + 100 });
        await storage.recordCallbackAttempt(due!.uid, {
          result: 'failed',
          statusCode: null,
          error: 'blocked address 10.0.0.1',
          nextAttemptAt: null,
          now: T0 + 101,
        });
        const callback = (await get(storage, message!)).callback;
        assert.equal(callback?.state, 'failed');
        assert.equal(callback?.attempts, 1);
        assert.equal(callback?.lastStatusCode, null);
        assert.equal(callback?.lastError, 'blocked address 10.0.0.1');
        assert.deepEqual(await storage.claimCallbacks({ owner: 'd', limit: 1, leaseMs: LEASE, now: T0 + 10 * LEASE }), []);
      });

      test('a retry keeps the report pending, ends its lease and makes it due later', async (storage) => {
        const [message] = await endWithReports(storage, 1);
        const [due] = await storage.claimCallbacks({ owner: 'd1', limit: 1, leaseMs: LEASE, now: T0 + 100 });
        await storage.recordCallbackAttempt(due!.uid, {
          result: 'retry',
          statusCode: 503,
          error: 'HTTP 503',
          nextAttemptAt: T0 + 1_000,
          now: T0 + 101,
        });
        assert.deepEqual((await get(storage, message!)).callback, {
          state: 'pending',
          attempts: 1,
          lastStatusCode: 503,
          lastError: 'HTTP 503',
          nextAttemptAt: T0 + 1_000,
        });
        assert.deepEqual(await storage.claimCallbacks({ owner: 'd2', limit: 1, leaseMs: LEASE, now: T0 + 999 }), []);
        const again = await storage.claimCallbacks({ owner: 'd2', limit: 1, leaseMs: LEASE, now: T0 + 1_000 });
        assert.equal(again.length, 1);
        assert.equal(again[0]!.uid, due!.uid);
        assert.equal(again[0]!.attempts, 1);
      });
    });

    describe('purge', () => {
      test('deletes old terminal messages only, keeps pending reports, and respects the limit', async (storage) => {
        const queued = buildNewMessage({ createdAt: T0 });
        const submitted = buildNewMessage({ createdAt: T0 });
        const oldDone = Array.from({ length: 3 }, () => buildNewMessage({ createdAt: T0 }));
        const recentDone = buildNewMessage({ createdAt: T0 });
        const pendingReport = buildNewMessage({ createdAt: T0, callbackUrl: 'https://client.example/dlr' });
        const sentReport = buildNewMessage({ createdAt: T0, callbackUrl: 'https://client.example/dlr' });
        await storage.insertMessages([queued, submitted, ...oldDone, recentDone, pendingReport, sentReport]);
        await submitAll(storage, submitted);
        const oldIds: string[] = [];
        for (const message of oldDone) {
          oldIds.push(...(await submitAll(storage, message)));
          await storage.applyReceipt(receipt(oldIds.at(-1)!, DELIVERED, T0 + 100));
        }
        await storage.finish(recentDone.ref, FAILED, T0 + 5_000);
        await storage.finish(pendingReport.ref, FAILED, T0 + 100);
        await storage.finish(sentReport.ref, FAILED, T0 + 100);
        const due = await storage.claimCallbacks({ owner: 'd', limit: 10, leaseMs: LEASE, now: T0 + 200 });
        const sent = due.find((callback) => callback.message.ref === sentReport.ref)!;
        await storage.recordCallbackAttempt(sent.uid, {
          result: 'delivered',
          statusCode: 200,
          error: null,
          nextAttemptAt: null,
          now: T0 + 201,
        });

        const before = T0 + 1_000;
        assert.equal(await storage.purge(before, 2), 2);
        assert.equal(await storage.purge(before, 10), 2);
        assert.equal(await storage.purge(before, 10), 0);

        for (const message of [...oldDone, sentReport]) {
          assert.equal(await storage.getMessage('principal-a', message.ref), null, 'old terminal message is purged');
        }
        for (const message of [queued, submitted, recentDone, pendingReport]) {
          assert.ok(await storage.getMessage('principal-a', message.ref), 'message is kept');
        }
        // Their carrier ids go with them.
        assert.deepEqual(await storage.applyReceipt(receipt(oldIds[0]!)), { kind: 'unknown' });
        const stillDue = await storage.claimCallbacks({ owner: 'd2', limit: 10, leaseMs: LEASE, now: T0 + 10 * LEASE });
        assert.deepEqual(refsOf(stillDue.map((callback) => callback.message)), [pendingReport.ref]);
      });

      test('drops every carrier id of a purged message, one replaced by a second submission too, but not one a carrier reused for a later message', async (storage) => {
        const [ended, later] = await insert(storage, buildNewMessage({ smsCount: 2 }), buildNewMessage());
        await storage.recordSubmission(ended!.ref, 0, 'first-try', T0 + 1);
        await storage.recordSubmission(ended!.ref, 0, 'second-try', T0 + 2);
        await storage.recordSubmission(ended!.ref, 1, 'reused', T0 + 3);
        await storage.recordSubmission(later!.ref, 0, 'reused', T0 + 4);
        await storage.finish(ended!.ref, FAILED, T0 + 5);

        assert.equal(await storage.purge(T0 + 1_000, 10), 1);
        assert.deepEqual(await storage.applyReceipt(receipt('first-try')), { kind: 'unknown' });
        assert.deepEqual(await storage.applyReceipt(receipt('second-try')), { kind: 'unknown' });
        const reused = await storage.applyReceipt(receipt('reused', DELIVERED, T0 + 2_000));
        assert.equal(reused.kind, 'terminal');
        assert.equal(reused.kind === 'terminal' && reused.ref, later!.ref);
      });
    });
  });
}

/**
 * The storage contract suite's tests of one topic. Report recovery (see
 * `Storage.listCallbacks` and `Storage.replayCallbacks`): a principal's pending and failed
 * reports listed newest first by state, moving between the lists as attempts are recorded,
 * and a replay that makes failed reports pending and due again, by time range or by ref,
 * never another principal's. Optional: on an adapter without it every case is skipped,
 * saying why.
 */
import assert from 'node:assert/strict';
import type { CallbackListQuery, CallbackRecoveryStorage, NewMessage, Storage } from '../../storage/contract.js';
import type { SuiteContext } from './context.js';
import { buildNewMessage, FAILED, LEASE, T0 } from './fixtures.js';

/** Why a case is skipped on an adapter without the methods. */
const ABSENT = 'the adapter has no listCallbacks/replayCallbacks (optional: GET {base}/callbacks and the replay are then not served)';

const URL = 'https://client.example/dlr';

/** Registers the tests of this topic (see the module comment). */
export function callbackRecoveryTests({ describe, test }: SuiteContext): void {
  /** A case, given the storage's recovery methods; skipped when the storage lacks them. */
  function recovering(name: string, fn: (storage: Storage, recovery: CallbackRecoveryStorage) => Promise<void>): void {
    test(name, async (storage, skip) => {
      if (storage.listCallbacks === undefined || storage.replayCallbacks === undefined) {
        skip(ABSENT);
        return;
      }
      await fn(storage, { listCallbacks: storage.listCallbacks.bind(storage), replayCallbacks: storage.replayCallbacks.bind(storage) });
    });
  }

  /** Ends each of `messages` (stored one request each, in order) failed at T0+10, with its report pending. */
  async function endAll(storage: Storage, messages: readonly NewMessage[]): Promise<void> {
    for (const message of messages) await storage.insertMessages([message]);
    for (const message of messages) await storage.finish(message.ref, FAILED, T0 + 10);
  }

  /** Claims every due report at `now` and records `result` for each; their refs. */
  async function attemptAll(storage: Storage, now: number, result: 'failed' | 'delivered' | 'retry'): Promise<string[]> {
    const due = await storage.claimCallbacks({ owner: 'suite', limit: 1000, leaseMs: LEASE, now });
    for (const report of due) {
      const statusCode = result === 'delivered' ? 200 : 500;
      await storage.recordCallbackAttempt(report.uid, { result, statusCode, error: result === 'delivered' ? null : 'HTTP 500', nextAttemptAt: result === 'retry' ? now + 1000 : null, now });
    }
    return due.map((report) => report.message.ref);
  }

  /** The refs on one page of `query` (principal `key-a`, limit 100 unless given). */
  async function refs(recovery: CallbackRecoveryStorage, query: Partial<CallbackListQuery> = {}): Promise<string[]> {
    return (await recovery.listCallbacks({ principalId: 'key-a', limit: 100, ...query })).messages.map((message) => message.ref);
  }

  describe('report recovery', () => {
    recovering('lists pending and failed reports by state, newest first, following each attempt', async (storage, recovery) => {
      const [a, b, c] = [1, 2, 3].map((i) => buildNewMessage({ principalId: 'key-a', createdAt: T0 + i, callbackUrl: URL }));
      const noUrl = buildNewMessage({ principalId: 'key-a', createdAt: T0 + 4 });
      const other = buildNewMessage({ principalId: 'key-b', createdAt: T0 + 5, callbackUrl: URL });
      await endAll(storage, [a!, b!, c!, noUrl, other]);
      assert.deepEqual(await refs(recovery), [c!.ref, b!.ref, a!.ref], 'rule: every pending report of the principal, newest first; none without a URL');
      assert.deepEqual(await refs(recovery, { states: ['failed'] }), [], 'rule: no report has failed yet');
      const due = await storage.claimCallbacks({ owner: 'suite', limit: 10, leaseMs: LEASE, now: T0 + 20 });
      for (const report of due) {
        const ref = report.message.ref;
        const result = ref === a!.ref ? 'delivered' : ref === b!.ref ? 'failed' : 'retry';
        await storage.recordCallbackAttempt(report.uid, { result, statusCode: 500, error: 'HTTP 500', nextAttemptAt: result === 'retry' ? T0 + 60_000 : null, now: T0 + 21 });
      }
      assert.deepEqual(await refs(recovery, { states: ['failed'] }), [b!.ref], 'rule: a report given up on is on the failed list');
      assert.deepEqual(await refs(recovery, { states: ['pending'] }), [c!.ref], 'rule: a retried report stays pending; a delivered one leaves both lists');
      assert.deepEqual(await refs(recovery), [c!.ref, b!.ref]);
      const failed = (await recovery.listCallbacks({ principalId: 'key-a', limit: 10, states: ['failed'] })).messages[0]!;
      assert.equal(failed.callback?.attempts, 1, 'rule: a listed report carries its attempts');
      assert.deepEqual(await refs(recovery, { principalId: 'key-b' }), [other.ref], 'rule: a principal lists only its own reports');
    });

    recovering('pages by keyset and filters by acceptance time', async (storage, recovery) => {
      const messages = Array.from({ length: 7 }, (_, i) => buildNewMessage({ principalId: 'key-a', createdAt: T0 + i, callbackUrl: URL }));
      await endAll(storage, messages);
      const first = await recovery.listCallbacks({ principalId: 'key-a', limit: 3 });
      assert.deepEqual(first.messages.map((m) => m.ref), [messages[6]!.ref, messages[5]!.ref, messages[4]!.ref]);
      assert.notEqual(first.next, null, 'rule: a full page with more after it has a next');
      const second = await recovery.listCallbacks({ principalId: 'key-a', limit: 10, after: first.next! });
      assert.deepEqual(second.messages.map((m) => m.ref), [3, 2, 1, 0].map((i) => messages[i]!.ref));
      assert.equal(second.next, null, 'rule: the last page has no next');
      assert.deepEqual(await refs(recovery, { since: T0 + 2, until: T0 + 5 }), [4, 3, 2].map((i) => messages[i]!.ref), 'rule: since inclusive, until exclusive');
    });

    recovering('a replay makes failed reports pending and due at once, by range or by ref, only the principal\u2019s', async (storage, recovery) => {
      const mine = Array.from({ length: 4 }, (_, i) => buildNewMessage({ principalId: 'key-a', createdAt: T0 + i, callbackUrl: URL }));
      const theirs = buildNewMessage({ principalId: 'key-b', createdAt: T0 + 1, callbackUrl: URL });
      await endAll(storage, [...mine, theirs]);
      assert.equal((await attemptAll(storage, T0 + 20, 'failed')).length, 5);
      assert.equal(await recovery.replayCallbacks({ principalId: 'key-a', refs: [theirs.ref, mine[0]!.ref, mine[0]!.ref, 'no-such-ref'] }, T0 + 100), 1, 'rule: only the principal\u2019s failed reports, each once');
      assert.equal(await recovery.replayCallbacks({ principalId: 'key-a', since: T0 + 2 }, T0 + 100), 2, 'rule: a range replays the failed reports accepted in it');
      assert.equal(await recovery.replayCallbacks({ principalId: 'key-a', since: T0 + 2 }, T0 + 100), 0, 'rule: a pending report is not replayed again');
      assert.deepEqual(await refs(recovery, { states: ['failed'] }), [mine[1]!.ref]);
      assert.deepEqual(await refs(recovery, { states: ['pending'] }), [mine[3]!.ref, mine[2]!.ref, mine[0]!.ref]);
      const due = await storage.claimCallbacks({ owner: 'suite', limit: 10, leaseMs: LEASE, now: T0 + 100 });
      assert.deepEqual(due.map((report) => report.message.ref).sort(), [mine[0]!.ref, mine[2]!.ref, mine[3]!.ref].sort(), 'rule: a replayed report is due at the replay');
      for (const report of due) {
        assert.equal(report.attempts, 1, 'rule: a replay keeps the attempts made');
        assert.equal(report.message.callback?.restartedAfter, 1, 'rule: the retry schedule starts again after them');
        await storage.recordCallbackAttempt(report.uid, { result: 'delivered', statusCode: 200, error: null, nextAttemptAt: null, now: T0 + 101 });
      }
      assert.deepEqual(await refs(recovery), [mine[1]!.ref], 'rule: a delivered replay leaves the lists');
      assert.equal((await storage.getMessage('key-a', mine[0]!.ref))?.callback?.attempts, 2);
    });
  });
}

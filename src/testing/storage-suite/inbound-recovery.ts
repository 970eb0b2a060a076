/**
 * The storage contract suite's tests of one topic. Inbound webhook recovery (see
 * `InboundStorage.listInboundWebhooks` and `InboundStorage.replayInboundWebhooks`): a
 * principal's pending and failed inbound webhooks listed newest arrival first by state,
 * paged by keyset, and a replay that makes failed ones pending, unleased and due again, by
 * range of arrival or by ref, never another principal's, its retry schedule started anew.
 * Optional: on an adapter without it every case is skipped, saying why.
 */
import assert from 'node:assert/strict';
import type { CallbackListQuery, NewInbound, Storage } from '../../storage/contract.js';
import type { InboundRecoveryStorage } from '../../storage/inbound-record.js';
import type { SuiteContext } from './context.js';
import { LEASE, T0 } from './fixtures.js';
import { buildInbound } from './inbound.js';

/** Why a case is skipped on an adapter without the methods. */
const ABSENT = 'the adapter has no listInboundWebhooks/replayInboundWebhooks (optional: GET {base}/callbacks?kind=inbound and its replay are then not served)';

/** A storage with the inbound methods and their recovery. */
type Recovering = Storage & InboundRecoveryStorage & Required<Pick<Storage, 'insertInbound' | 'claimInbound' | 'recordInboundAttempt' | 'purgeInbound'>>;

/** Registers the tests of this topic (see the module comment). */
export function inboundRecoveryTests({ describe, test }: SuiteContext): void {
  /** A case, given the storage; skipped when it lacks inbound webhook recovery. */
  function recovering(name: string, fn: (storage: Recovering) => Promise<void>): void {
    test(name, async (storage, skip) => {
      if (storage.insertInbound === undefined || storage.listInboundWebhooks === undefined || storage.replayInboundWebhooks === undefined) {
        skip(ABSENT);
        return;
      }
      await fn(storage as Recovering);
    });
  }

  /** Stores `messages` in order, then claims every due webhook at `now` and records `result` for the refs `resultOf` names (others: failed). */
  async function attemptAll(storage: Recovering, now: number, resultOf: (ref: string) => 'failed' | 'delivered' | 'retry' = () => 'failed'): Promise<void> {
    for (const due of await storage.claimInbound({ owner: 'suite', limit: 1000, leaseMs: LEASE, now })) {
      const result = resultOf(due.inbound.ref);
      await storage.recordInboundAttempt(due.uid, {
        result, statusCode: result === 'delivered' ? 200 : 503, error: result === 'delivered' ? null : 'HTTP 503',
        nextAttemptAt: result === 'retry' ? now + 60_000 : null, now,
      });
    }
  }

  /** Stores each of `messages`, one at a time, in order. */
  async function insertAll(storage: Recovering, messages: readonly NewInbound[]): Promise<void> {
    for (const message of messages) await storage.insertInbound(message);
  }

  /** The refs on one page of `query` (principal `acme`, limit 100 unless given). */
  async function refs(storage: Recovering, query: Partial<CallbackListQuery> = {}): Promise<string[]> {
    return (await storage.listInboundWebhooks({ principalId: 'acme', limit: 100, ...query })).inbound.map((record) => record.ref);
  }

  describe('inbound webhook recovery', () => {
    recovering('lists pending and failed inbound webhooks by state, newest arrival first, following each attempt', async (storage) => {
      const [a, b, c] = [1, 2, 3].map((i) => buildInbound({ receivedAt: T0 + i }));
      const noUrl = buildInbound({ receivedAt: T0 + 4, callbackUrl: null });
      const other = buildInbound({ principalId: 'globex', receivedAt: T0 + 5 });
      await insertAll(storage, [a!, b!, c!, noUrl, other]);
      assert.deepEqual(await refs(storage), [c!.ref, b!.ref, a!.ref], 'rule: every pending webhook of the principal, newest first; none without a URL');
      assert.deepEqual(await refs(storage, { states: ['failed'] }), [], 'rule: no webhook has failed yet');
      await attemptAll(storage, T0 + 20, (ref) => (ref === a!.ref ? 'delivered' : ref === b!.ref ? 'failed' : 'retry'));
      assert.deepEqual(await refs(storage, { states: ['failed'] }), [b!.ref], 'rule: a webhook given up on is on the failed list');
      assert.deepEqual(await refs(storage, { states: ['pending'] }), [c!.ref], 'rule: a retried webhook stays pending; a delivered one leaves both lists');
      assert.deepEqual(await refs(storage), [c!.ref, b!.ref]);
      const failed = (await storage.listInboundWebhooks({ principalId: 'acme', limit: 10, states: ['failed'] })).inbound[0]!;
      assert.deepEqual(
        { attempts: failed.callback?.attempts, status: failed.callback?.lastStatusCode, error: failed.callback?.lastError, url: failed.callbackUrl },
        { attempts: 1, status: 503, error: 'HTTP 503', url: 'https://client.example/inbound' },
        'rule: a listed webhook carries its URL, attempts, last status and error',
      );
      assert.deepEqual(await refs(storage, { principalId: 'globex' }), [other.ref], 'rule: a principal lists only its own webhooks');
    });

    recovering('pages by keyset and filters by arrival time', async (storage) => {
      const messages = Array.from({ length: 7 }, (_, i) => buildInbound({ receivedAt: T0 + (i < 2 ? 0 : i) }));
      await insertAll(storage, messages);
      const newestFirst = [6, 5, 4, 3, 2, 1, 0].map((i) => messages[i]!.ref);
      const first = await storage.listInboundWebhooks({ principalId: 'acme', limit: 3 });
      assert.deepEqual(first.inbound.map((m) => m.ref), newestFirst.slice(0, 3));
      assert.notEqual(first.next, null, 'rule: a full page with more after it has a next');
      const second = await storage.listInboundWebhooks({ principalId: 'acme', limit: 3, after: first.next! });
      const third = await storage.listInboundWebhooks({ principalId: 'acme', limit: 3, after: second.next! });
      assert.deepEqual([...second.inbound, ...third.inbound].map((m) => m.ref), newestFirst.slice(3), 'rule: pages follow on, ties on arrival in insertion order');
      assert.equal(third.next, null, 'rule: the last page has no next');
      assert.deepEqual(await refs(storage, { since: T0 + 3, until: T0 + 6 }), newestFirst.slice(1, 4), 'rule: since inclusive, until exclusive');
    });

    recovering('a replay makes failed webhooks pending and due at once, by range or by ref, only the principal\'s', async (storage) => {
      const [a, b, c, d] = [1, 2, 3, 4].map((i) => buildInbound({ receivedAt: T0 + i }));
      const other = buildInbound({ principalId: 'globex', receivedAt: T0 + 2 });
      await insertAll(storage, [a!, b!, c!, d!, other]);
      await attemptAll(storage, T0 + 10, (ref) => (ref === d!.ref ? 'delivered' : 'failed'));
      assert.equal(await storage.replayInboundWebhooks({ principalId: 'acme', since: T0 + 2, until: T0 + 5 }, T0 + 100), 2, 'rule: the failed ones in range (b, c); a delivered one is not replayed');
      assert.deepEqual(await refs(storage, { states: ['pending'] }), [c!.ref, b!.ref]);
      assert.deepEqual(await refs(storage, { states: ['failed'] }), [a!.ref]);
      assert.equal(await storage.replayInboundWebhooks({ principalId: 'acme', refs: [a!.ref, b!.ref, other.ref, d!.ref, 'no-such-ref'] }, T0 + 100), 1,
        'rule: by ref only the principal\'s failed ones; pending, delivered, another\'s and unknown refs are left alone');
      assert.deepEqual(await refs(storage, { principalId: 'globex', states: ['failed'] }), [other.ref]);
      assert.deepEqual(await storage.claimInbound({ owner: 'suite', limit: 10, leaseMs: LEASE, now: T0 + 99 }), [], 'rule: due at the replay\'s time, not before');
      const due = await storage.claimInbound({ owner: 'suite', limit: 10, leaseMs: LEASE, now: T0 + 100 });
      assert.deepEqual(due.map((w) => w.inbound.ref).sort(), [a!.ref, b!.ref, c!.ref].sort(), 'rule: replayed webhooks are claimable at once');
      for (const webhook of due) {
        assert.equal(webhook.attempts, 1, 'rule: the attempts made so far are kept');
        assert.equal(webhook.inbound.callback?.restartedAfter, 1, 'rule: the retry schedule starts anew after them');
      }
      await storage.recordInboundAttempt(due[0]!.uid, { result: 'delivered', statusCode: 200, error: null, nextAttemptAt: null, now: T0 + 101 });
      const listed = await storage.listInboundWebhooks({ principalId: 'acme', limit: 10 });
      assert.equal(listed.inbound.some((m) => m.ref === due[0]!.inbound.ref), false, 'rule: a replayed webhook delivered leaves the list');
      assert.equal(listed.inbound.find((m) => m.ref === due[1]!.inbound.ref)?.callback?.attempts, 1);
    });

    recovering('a replayed webhook pending again is not purged; once it ends it is', async (storage) => {
      const message = buildInbound({ receivedAt: T0 });
      await storage.insertInbound(message);
      await attemptAll(storage, T0 + 1);
      assert.equal(await storage.replayInboundWebhooks({ principalId: 'acme', refs: [message.ref] }, T0 + 2), 1);
      assert.equal(await storage.purgeInbound(T0 + 10, 100), 0, 'rule: a purge leaves a pending webhook\'s message');
      assert.deepEqual(await refs(storage, { states: ['pending'] }), [message.ref]);
      await attemptAll(storage, T0 + 3, () => 'delivered');
      assert.equal(await storage.purgeInbound(T0 + 10, 100), 1, 'rule: once delivered it may go');
      assert.deepEqual(await refs(storage), []);
    });
  });
}

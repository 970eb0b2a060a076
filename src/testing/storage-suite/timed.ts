/**
 * Contract tests: scheduled messages, validity periods and cancels (`promoteScheduled`,
 * `expireUnsent`, `cancelMessages`; `VALIDITY_ELAPSED`, `CANCELLED`, `leaseBarsCancel`). Skipped for an adapter without them.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { Storage } from '../../storage/contract.js';
import type { SuiteContext } from './context.js';
import { buildNewMessage, LEASE, refsOf, T0 } from './fixtures.js';

const MINUTE = 60_000;

/** A claim of up to `limit` at `now` by `owner`. */
function claim(storage: Storage, now: number, limit = 10, owner = 'w1') {
  return storage.claimMessages({ owner, limit, leaseMs: LEASE, now });
}

/** The storage's time-aware methods, or a skip. */
function timed(storage: Storage, skip: (reason: string) => void) {
  const { promoteScheduled, expireUnsent, cancelMessages } = storage;
  if (promoteScheduled === undefined || expireUnsent === undefined || cancelMessages === undefined) {
    skip('the adapter has no promoteScheduled / expireUnsent / cancelMessages');
    return null;
  }
  return {
    promote: promoteScheduled.bind(storage),
    expire: expireUnsent.bind(storage),
    cancel: cancelMessages.bind(storage),
  };
}

/** Registers the time-aware tests. */
export function timedTests({ describe, test, insert, get, submitAll }: SuiteContext): void {
  describe('scheduled messages', () => {
    test('a scheduled message is stored scheduled, is not claimed before it is due, and is queued once due', async (storage, skip) => {
      const t = timed(storage, skip);
      if (t === null) return;
      const [later] = await insert(storage, buildNewMessage({ sendAt: T0 + 10 * MINUTE }));
      assert.equal((await get(storage, later!)).state, 'scheduled');
      assert.equal((await get(storage, later!)).sendAt, T0 + 10 * MINUTE);
      assert.deepEqual(await claim(storage, T0 + 20 * MINUTE), [], 'a scheduled message is claimed only once promoted');
      assert.deepEqual(await t.promote(T0 + 9 * MINUTE, 10), [], 'not due yet');
      const promoted = await t.promote(T0 + 10 * MINUTE, 10);
      assert.deepEqual(
        promoted.map((x) => [x.message.ref, x.previousState, x.message.state]),
        [[later!.ref, 'scheduled', 'queued']],
      );
      assert.deepEqual(await t.promote(T0 + 10 * MINUTE, 10), [], 'promoted once');
      assert.deepEqual(refsOf(await claim(storage, T0 + 10 * MINUTE)), [later!.ref]);
    });

    test('a due scheduled message takes its turn with what is queued when it is due, not before it', async (storage, skip) => {
      const t = timed(storage, skip);
      if (t === null) return;
      const [scheduled] = await insert(storage, buildNewMessage({ principalId: 'b', sendAt: T0 + MINUTE }));
      const campaign = await insert(storage, ...Array.from({ length: 4 }, () => buildNewMessage({ principalId: 'a', createdAt: T0 + 1 })));
      await t.promote(T0 + MINUTE, 10);
      // b's message is due after a's four were accepted: it starts its turn at the head (the
      // tag of a's first; which of the two goes first is the tie's acceptance order), not
      // behind the whole campaign.
      const order = refsOf(await claim(storage, T0 + MINUTE, 5));
      assert.ok(order.indexOf(scheduled!.ref) <= 1, `b's message is claimed at the head: ${order.join(', ')}`);
      assert.deepEqual(order.filter((ref) => ref !== scheduled!.ref), refsOf(campaign), "a's messages keep their order");
    });

    test('a scheduled message whose validity ended before it was queued ends expired, never queued', async (storage, skip) => {
      const t = timed(storage, skip);
      if (t === null) return;
      const [late] = await insert(storage, buildNewMessage({ sendAt: T0 + MINUTE, validUntil: T0 + 2 * MINUTE, callbackUrl: 'https://c.example/dlr' }));
      const ended = await t.promote(T0 + 3 * MINUTE, 10);
      assert.equal(ended.length, 1);
      assert.equal(ended[0]!.previousState, 'scheduled');
      assert.equal(ended[0]!.message.state, 'expired');
      assert.equal(ended[0]!.message.statusReason, 'validity_period_elapsed');
      assert.deepEqual(await claim(storage, T0 + 3 * MINUTE), []);
      const [report] = await storage.claimCallbacks({ owner: 'd', limit: 10, leaseMs: LEASE, now: T0 + 3 * MINUTE });
      assert.equal(report?.message.ref, late!.ref, 'its delivery report is stored with the ending');
    });

    test('retention never purges a scheduled message, however old', async (storage) => {
      const [waiting] = await insert(storage, buildNewMessage({ sendAt: T0 + 20 * 86_400_000 }));
      if ((await get(storage, waiting!)).state !== 'scheduled') return;
      await storage.purge(T0 + 10 * 86_400_000, 100);
      assert.equal((await get(storage, waiting!)).state, 'scheduled');
    });
  });

  describe('validity periods', () => {
    test('a queued message whose validity ended is never claimed, and the sweep ends it expired with its report', async (storage, skip) => {
      const t = timed(storage, skip);
      if (t === null) return;
      const [stale, fresh] = await insert(
        storage,
        buildNewMessage({ validUntil: T0 + MINUTE, callbackUrl: 'https://c.example/dlr' }),
        buildNewMessage({ validUntil: T0 + 10 * MINUTE }),
      );
      assert.equal((await get(storage, stale!)).validUntil, T0 + MINUTE);
      assert.deepEqual(refsOf(await claim(storage, T0 + 2 * MINUTE)), [fresh!.ref], 'the stale one is passed over');
      const ended = await t.expire(T0 + 2 * MINUTE, 10);
      assert.deepEqual(ended.map((x) => [x.message.ref, x.previousState, x.message.state, x.message.statusReason]), [
        [stale!.ref, 'queued', 'expired', 'validity_period_elapsed'],
      ]);
      assert.deepEqual(await t.expire(T0 + 2 * MINUTE, 10), [], 'ended once');
      const reports = await storage.claimCallbacks({ owner: 'd', limit: 10, leaseMs: LEASE, now: T0 + 2 * MINUTE });
      assert.deepEqual(refsOf(reports.map((r) => r.message)), [stale!.ref]);
    });

    test('the sweep leaves a stale message a live lease holds to its owner', async (storage, skip) => {
      const t = timed(storage, skip);
      if (t === null) return;
      const [held] = await insert(storage, buildNewMessage({ validUntil: T0 + 1000 }));
      assert.deepEqual(refsOf(await claim(storage, T0)), [held!.ref]);
      assert.deepEqual(await t.expire(T0 + LEASE - 1, 10), [], 'leased until T0 + LEASE');
      const ended = await t.expire(T0 + LEASE + MINUTE, 10);
      assert.deepEqual(refsOf(ended.map((x) => x.message)), [held!.ref], 'once the lease ended');
    });
  });

  describe('cancel', () => {
    test('cancels scheduled and unleased queued messages, and names the others with their state', async (storage, skip) => {
      const t = timed(storage, skip);
      if (t === null) return;
      const [scheduled, queued, leased, sent, others] = await insert(
        storage,
        buildNewMessage({ sendAt: T0 + MINUTE, callbackUrl: 'https://c.example/dlr' }),
        buildNewMessage(),
        buildNewMessage(),
        buildNewMessage(),
        buildNewMessage({ principalId: 'someone-else' }),
      );
      await claim(storage, T0, 10, 'w1');
      // Of the claimed three, one is given back (no lease) and one submitted.
      await storage.reschedule(queued!.ref, T0, 'throttled', T0);
      await submitAll(storage, sent!);
      const result = await t.cancel('principal-a', [scheduled!.ref, queued!.ref, leased!.ref, sent!.ref, others!.ref, 'nope'], T0 + 1);
      assert.deepEqual(result.cancelled.map((x) => [x.message.ref, x.previousState, x.message.state, x.message.statusReason]).sort(), [
        [queued!.ref, 'queued', 'cancelled', 'cancelled'],
        [scheduled!.ref, 'scheduled', 'cancelled', 'cancelled'],
      ].sort());
      assert.deepEqual(
        result.notCancelled.sort((a, b) => a.ref.localeCompare(b.ref)),
        [
          { ref: leased!.ref, state: 'queued' },
          { ref: sent!.ref, state: 'submitted' },
        ].sort((a, b) => a.ref.localeCompare(b.ref)),
        'another principal\'s message and an unknown ref are in neither list',
      );
      assert.equal((await get(storage, others!)).state, 'queued');
      assert.equal((await get(storage, leased!)).state, 'queued');
      const reports = await storage.claimCallbacks({ owner: 'd', limit: 10, leaseMs: LEASE, now: T0 + 1 });
      assert.deepEqual(refsOf(reports.map((r) => r.message)), [scheduled!.ref], 'a cancelled message gets its report');
      assert.deepEqual(await t.promote(T0 + MINUTE, 10), [], 'a cancelled scheduled message is never queued');
    });

    test('a cancelled message is never claimed, and its submission is refused', async (storage, skip) => {
      const t = timed(storage, skip);
      if (t === null) return;
      const [message] = await insert(storage, buildNewMessage());
      assert.equal((await t.cancel('principal-a', [message!.ref], T0)).cancelled.length, 1);
      assert.deepEqual(await claim(storage, T0 + MINUTE), []);
      assert.equal((await storage.recordSubmission(message!.ref, 0, 'c-1', T0 + MINUTE)).kind, 'stale');
      const again = await t.cancel('principal-a', [message!.ref], T0 + MINUTE);
      assert.deepEqual(again, { cancelled: [], notCancelled: [{ ref: message!.ref, state: 'cancelled' }] });
    });

    test('a message leased at insert is not cancelled while its lease holds', async (storage, skip) => {
      const t = timed(storage, skip);
      if (t === null) return;
      const message = buildNewMessage();
      await storage.insertMessages([message], { owner: 'w1', until: T0 + LEASE });
      const result = await t.cancel('principal-a', [message.ref], T0 + 1);
      assert.deepEqual(result, { cancelled: [], notCancelled: [{ ref: message.ref, state: 'queued' }] });
    });
  });
}

/**
 * The storage contract suite's tests of one topic. Delivery reports to the client:
 * claiming due reports, deferring them, leases taken when a receipt makes the report, and
 * recording each attempt's result. Kept as a topic of its own because the report
 * dispatcher relies on these to send each report until it succeeds or gives up, and on no
 * two instances sending one at once.
 */
import assert from 'node:assert/strict';
import type { NewMessage, Storage } from '../../storage/contract.js';
import type { SuiteContext } from './context.js';
import { buildNewMessage, DELIVERED, FAILED, LEASE, RACE_ROUNDS, receipt, refsOf, T0 } from './fixtures.js';

/** Registers the tests of this topic (see the module comment). */
export function callbackTests({ describe, test, insert, get, submitAll }: SuiteContext): void {
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

    test(`receipts applied at once keep each report lease to its own report, and two report claims at once get disjoint sets (${RACE_ROUNDS} rounds)`, async (storage) => {
      const url = 'https://client.example/dlr';
      for (let round = 0; round < RACE_ROUNDS; round++) {
        const now = T0 + round * 4 * LEASE;
        const messages = [buildNewMessage({ callbackUrl: url }), buildNewMessage({ callbackUrl: url }), buildNewMessage({ callbackUrl: url })];
        await storage.insertMessages(messages);
        const ids: string[] = [];
        for (const message of messages) ids.push(...(await submitAll(storage, message, now)));
        const lease = { owner: 'applying', until: now + LEASE };
        const [leased, ...plain] = await Promise.all([
          storage.applyReceipt({ ...receipt(ids[0]!, DELIVERED, now), reportLease: lease }),
          storage.applyReceipt(receipt(ids[1]!, DELIVERED, now)),
          storage.applyReceipt(receipt(ids[2]!, DELIVERED, now)),
        ]);
        assert.ok(leased!.kind === 'terminal' && plain.every((r) => r.kind === 'terminal'), `round ${round}: every receipt ends its message`);
        const report = leased!.transition.leasedReport;
        const [a, b] = await Promise.all([
          storage.claimCallbacks({ owner: 'a', limit: 2, leaseMs: LEASE, now: now + 1 }),
          storage.claimCallbacks({ owner: 'b', limit: 2, leaseMs: LEASE, now: now + 1 }),
        ]);
        const claimed = [...a, ...b].map((c) => c.message.ref);
        const expected = (report === undefined ? messages : messages.slice(1)).map((m) => m.ref);
        assert.deepEqual(
          [...claimed].sort(),
          [...expected].sort(),
          `round ${round}: two claims at once took [${a.map((c) => c.message.ref).join(', ')}] and [${b.map((c) => c.message.ref).join(', ')}] (rule: each due, unleased report exactly once, none under a live lease, a lease taken with a receipt kept to its own report)`,
        );
        for (const due of [...a, ...b]) await storage.recordCallbackAttempt(due.uid, { result: 'delivered', statusCode: 204, error: null, nextAttemptAt: null, now: now + 2 });
        if (report !== undefined) await storage.recordCallbackAttempt(report.uid, { result: 'delivered', statusCode: 204, error: null, nextAttemptAt: null, now: now + 2 });
      }
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

    test('reported part by part: each part that ends gets a report, one pending at a time, in the order the parts ended', async (storage, skip) => {
      const [message] = await insert(storage, buildNewMessage({ smsCount: 3, callbackUrl: 'https://client.example/dlr', reportPer: 'part' }));
      const ids = await submitAll(storage, message!);
      assert.equal((await storage.applyReceipt(receipt(ids[2]!, DELIVERED, T0 + 100))).kind, 'part');
      assert.equal((await storage.applyReceipt(receipt(ids[0]!, FAILED, T0 + 101))).kind, 'part');
      const delivered = { result: 'delivered', statusCode: 204, error: null, nextAttemptAt: null } as const;
      const first = await storage.claimCallbacks({ owner: 'd', limit: 10, leaseMs: LEASE, now: T0 + 200 });
      if (first.length === 1 && first[0]!.part === undefined) {
        skip('the storage keeps no reports per part (reportPer): one report per message');
        return;
      }
      assert.deepEqual(first.map((due) => due.part), [2], 'the first part to end is reported first, alone (rule: one report of a message pending at a time)');
      await storage.recordCallbackAttempt(first[0]!.uid, { ...delivered, now: T0 + 201 });
      const second = await storage.claimCallbacks({ owner: 'd', limit: 10, leaseMs: LEASE, now: T0 + 202 });
      assert.deepEqual(second.map((due) => due.part), [0], 'the next part\u2019s report is pending once the one before it is finished');
      assert.equal((await storage.applyReceipt(receipt(ids[1]!, DELIVERED, T0 + 300))).kind, 'terminal');
      await storage.recordCallbackAttempt(second[0]!.uid, { ...delivered, now: T0 + 301 });
      const third = await storage.claimCallbacks({ owner: 'd', limit: 10, leaseMs: LEASE, now: T0 + 302 });
      assert.deepEqual(third.map((due) => [due.part, due.message.state]), [[1, 'failed']], 'the last part\u2019s report comes with the ended message');
      assert.equal(new Set([first[0]!.uid, second[0]!.uid, third[0]!.uid]).size, 3, 'each part report has its own uid');
      await storage.recordCallbackAttempt(third[0]!.uid, { ...delivered, now: T0 + 303 });
      assert.deepEqual(await storage.claimCallbacks({ owner: 'd', limit: 10, leaseMs: LEASE, now: T0 + 10 * LEASE }), [], 'no report on the whole message after its parts\u2019');
      assert.equal((await get(storage, message!)).callback?.state, 'delivered');
    });

    test('reported part by part: the parts with no receipt when the message ends get their reports with it', async (storage, skip) => {
      const [message] = await insert(storage, buildNewMessage({ smsCount: 2, callbackUrl: 'https://client.example/dlr', reportPer: 'part' }));
      await storage.claimMessages({ owner: 'w', limit: 1, leaseMs: LEASE, now: T0 });
      await storage.finish(message!.ref, FAILED, T0 + 10);
      const parts: (number | undefined)[] = [];
      for (let now = T0 + 20; parts.length < 3; now += 10) {
        const [due] = await storage.claimCallbacks({ owner: 'd', limit: 10, leaseMs: LEASE, now });
        if (due === undefined) break;
        parts.push(due.part);
        await storage.recordCallbackAttempt(due.uid, { result: 'failed', statusCode: 410, error: null, nextAttemptAt: null, now: now + 1 });
      }
      if (parts[0] === undefined) {
        skip('the storage keeps no reports per part (reportPer): one report per message');
        return;
      }
      assert.deepEqual(parts, [0, 1], 'one report per part, in index order, even when the one before it was given up on');
    });
  });
}

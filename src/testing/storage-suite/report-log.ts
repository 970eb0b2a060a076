/**
 * The storage contract suite's tests of one topic. The report log (see `Storage.readReports`):
 * one report per message that ends, whether it has a callback URL or not, made in the same
 * step as the end, read in the order made from a key, each once however the reads are paged
 * and however many messages end at once. The method is optional: on an adapter without it
 * every case is skipped, saying why.
 */
import assert from 'node:assert/strict';
import type { LoggedReport, Storage } from '../../storage/contract.js';
import type { SuiteContext } from './context.js';
import { buildNewMessage, DELIVERED, FAILED, LEASE, receipt, T0 } from './fixtures.js';

/** Why a case is skipped on an adapter without the method. */
const ABSENT = 'the adapter has no readReports (optional: GET {base}/reports is then not served)';

/** The storage's `readReports`. */
type Read = (principalId: string, after: number | null, limit: number) => Promise<LoggedReport[]>;

/** Every entry of `principalId` read in pages of `limit`, from the start. */
async function readAll(read: Read, principalId: string, limit: number): Promise<LoggedReport[]> {
  const all: LoggedReport[] = [];
  let after: number | null = null;
  for (let page = 0; page < 1000; page++) {
    const entries = await read(principalId, after, limit);
    assert.ok(entries.length <= limit, 'rule: at most limit entries');
    all.push(...entries);
    if (entries.length < limit) return all;
    after = entries.at(-1)!.seq;
  }
  throw new Error('rule: reading the log ends');
}

/** Registers the tests of this topic (see the module comment). */
export function reportLogTests({ describe, test, insert, submitAll }: SuiteContext): void {
  function logging(name: string, fn: (storage: Storage, read: Read) => Promise<void>): void {
    test(name, async (storage, skip) => {
      const read = storage.readReports?.bind(storage);
      if (read === undefined) {
        skip(ABSENT);
        return;
      }
      await fn(storage, read);
    });
  }

  describe('readReports (optional: each case is skipped, saying why, on an adapter without it)', () => {
    logging('logs one report per message that ends, with or without a callback URL, in the order they ended', async (storage, read) => {
      const plain = buildNewMessage({ principalId: 'key-a' });
      const called = buildNewMessage({ principalId: 'key-a', callbackUrl: 'https://client.example/dlr' });
      const other = buildNewMessage({ principalId: 'key-b' });
      await insert(storage, plain, called, other);
      assert.deepEqual(await read('key-a', null, 10), [], 'rule: nothing is logged before a message ends');
      await storage.finish(called.ref, FAILED, T0 + 10);
      const [id] = await submitAll(storage, plain);
      await storage.applyReceipt(receipt(id!, DELIVERED, T0 + 20));
      await storage.finish(plain.ref, FAILED, T0 + 30); // already ended: no second report
      await storage.finish(other.ref, FAILED, T0 + 40);
      const entries = await read('key-a', null, 10);
      assert.deepEqual(entries.map((e) => e.message.ref), [called.ref, plain.ref], 'rule: one report per message, in the order they ended');
      assert.ok(entries[0]!.seq < entries[1]!.seq, 'rule: keys increase');
      assert.equal(entries[0]!.message.state, 'failed', 'rule: the report holds the message as it ended');
      assert.equal(entries[1]!.message.state, 'delivered');
      const [due] = await storage.claimCallbacks({ owner: 'o', limit: 10, leaseMs: LEASE, now: T0 + 1_000 });
      assert.equal(entries[0]!.uid, due?.uid, 'rule: a message with a callback URL logs its pushed report\u2019s uid');
      assert.equal(entries[1]!.uid, plain.ref, 'a message without one: its ref');
      assert.deepEqual((await read('key-b', null, 10)).map((e) => e.message.ref), [other.ref], 'rule: a principal reads only its own');
      assert.deepEqual((await read('key-a', entries[0]!.seq, 10)).map((e) => e.message.ref), [plain.ref], 'rule: after a key, only later reports');
      assert.deepEqual(await read('key-a', entries[1]!.seq, 10), []);
    });

    logging('a report lives as long as its message: purging the message takes its report, the others stay readable', async (storage, read) => {
      const messages = [1, 2, 3].map(() => buildNewMessage({ principalId: 'key-p' }));
      await insert(storage, ...messages);
      for (const [i, message] of messages.entries()) await storage.finish(message.ref, FAILED, T0 + 10 * (i + 1));
      assert.equal(await storage.purge(T0 + 25, 10), 2, 'the two messages that ended before the time are purged');
      assert.deepEqual((await read('key-p', null, 10)).map((e) => e.message.ref), [messages[2]!.ref], 'rule: their reports go with them, the newer stays');
    });

    logging('messages ending at once are each logged once, and paged reads give each once, in key order', async (storage, read) => {
      const messages = Array.from({ length: 30 }, (_, i) => buildNewMessage({ principalId: 'key-a', createdAt: T0 + i }));
      await insert(storage, ...messages);
      const firstHalf = messages.slice(0, 15);
      await Promise.all(firstHalf.map((message, i) => storage.finish(message.ref, FAILED, T0 + 100 + i)));
      const early = await read('key-a', null, 100);
      // More end while a client reads from where it stopped.
      const [later] = await Promise.all([
        (async () => {
          const got: LoggedReport[] = [];
          let after = early.at(-1)!.seq;
          for (let i = 0; i < 20; i++) {
            const page = await read('key-a', after, 4);
            got.push(...page);
            if (page.length > 0) after = page.at(-1)!.seq;
          }
          return got;
        })(),
        Promise.all(messages.slice(15).map((message, i) => storage.finish(message.ref, FAILED, T0 + 200 + i))),
      ]);
      const rest = await read('key-a', later.length === 0 ? early.at(-1)!.seq : later.at(-1)!.seq, 100);
      const seen = [...early, ...later, ...rest].map((e) => e.message.ref);
      assert.equal(new Set(seen).size, seen.length, 'rule: no report is read twice');
      assert.deepEqual([...seen].sort(), messages.map((m) => m.ref).sort(), 'rule: every report is read');
      const all = await readAll(read, 'key-a', 7);
      assert.equal(all.length, 30);
      for (let i = 1; i < all.length; i++) assert.ok(all[i - 1]!.seq < all[i]!.seq, 'rule: keys increase');
    });
  });
}

/**
 * The storage contract suite's tests of one topic. Listing a principal's messages (see
 * `Storage.listMessages`): pages newest first by keyset, each filter alone and together,
 * the filters following a message's state as it changes, and pages that stay put while
 * messages are stored between them. The method is optional: on an adapter without it every
 * case is skipped, saying why.
 */
import assert from 'node:assert/strict';
import type { MessageListPage, MessageListQuery, NewMessage, Storage } from '../../storage/contract.js';
import type { SuiteContext } from './context.js';
import { buildNewMessage, FAILED, T0 } from './fixtures.js';

/** Why a case is skipped on an adapter without the method. */
const ABSENT = 'the adapter has no listMessages (optional: GET {base}/messages is then not served)';

/** One page, given the storage's `listMessages`. */
type List = (query: MessageListQuery) => Promise<MessageListPage>;

/** Every page of `query` read in turn with pages of `limit`; the refs, in the order read. */
async function readAll(list: List, query: Omit<MessageListQuery, 'limit'>, limit: number): Promise<string[]> {
  const refs: string[] = [];
  let after = query.after;
  for (let page = 0; page < 1000; page++) {
    const answer = await list({ ...query, ...(after === undefined ? {} : { after }), limit });
    assert.ok(answer.messages.length <= limit, `rule: a page holds at most limit (${limit}) messages`);
    refs.push(...answer.messages.map((message) => message.ref));
    if (answer.next === null) return refs;
    assert.equal(answer.messages.length, limit, 'rule: a page followed by another is full');
    after = answer.next;
  }
  throw new Error('rule: paging ends (a next cursor that never moves loops forever)');
}

/** The refs of `messages`, newest first (later `createdAt`, then inserted later: the order they are given). */
function newestFirst(messages: readonly NewMessage[]): string[] {
  return messages
    .map((message, i) => ({ message, i }))
    .sort((a, b) => b.message.createdAt - a.message.createdAt || b.i - a.i)
    .map(({ message }) => message.ref);
}

/** Registers the tests of this topic (see the module comment). */
export function listTests({ describe, test, insert }: SuiteContext): void {
  /** A case, given the storage's `listMessages`; skipped when the storage has none. */
  function listing(name: string, fn: (storage: Storage, list: List) => Promise<void>): void {
    test(name, async (storage, skip) => {
      const list = storage.listMessages?.bind(storage);
      if (list === undefined) {
        skip(ABSENT);
        return;
      }
      await fn(storage, list);
    });
  }

  /** Inserts `messages` one request each, in order (so in insertion order too). */
  async function insertEach(storage: Storage, messages: readonly NewMessage[]): Promise<void> {
    for (const message of messages) await insert(storage, message);
  }

  describe('listMessages (optional: each case is skipped, saying why, on an adapter without it)', () => {
    listing('lists only the principal\'s messages, newest first, in pages that end with next null', async (storage, list) => {
      const mine = Array.from({ length: 7 }, (_, i) => buildNewMessage({ principalId: 'key-a', createdAt: T0 + i * 10 }));
      await insertEach(storage, mine);
      await insert(storage, buildNewMessage({ principalId: 'key-b', createdAt: T0 + 5 }));
      assert.deepEqual(await readAll(list, { principalId: 'key-a' }, 3), newestFirst(mine), 'rule: every message once, newest first');
      const whole = await list({ principalId: 'key-a', limit: 100 });
      assert.equal(whole.next, null, 'rule: next is null when no message follows');
      assert.deepEqual(whole.messages[0]!.ref, mine[6]!.ref);
      assert.equal(whole.messages[0]!.text, mine[6]!.text, 'rule: a listed message is the stored record');
      const exact = await list({ principalId: 'key-a', limit: 7 });
      assert.equal(exact.next, null, 'rule: a page that ends the list exactly has next null');
      assert.deepEqual((await list({ principalId: 'key-c', limit: 10 })).messages, [], 'a principal with no messages');
    });

    listing('messages accepted in the same millisecond are paged in insertion order, newest first, each once', async (storage, list) => {
      const same = Array.from({ length: 8 }, () => buildNewMessage({ principalId: 'key-a', createdAt: T0 }));
      await insertEach(storage, same);
      assert.deepEqual(await readAll(list, { principalId: 'key-a' }, 3), newestFirst(same), 'rule: ties broken by insertion order, newest first');
    });

    listing('filters by state (one or several), recipient, external id, profile and acceptance time, alone and together', async (storage, list) => {
      const a = buildNewMessage({ principalId: 'key-a', createdAt: T0 + 10, recipient: '254700000001', externalId: 'x', profileCode: 'P1' });
      const b = buildNewMessage({ principalId: 'key-a', createdAt: T0 + 20, recipient: '254700000002', externalId: 'x', profileCode: 'P2' });
      const c = buildNewMessage({ principalId: 'key-a', createdAt: T0 + 30, recipient: '254700000001', externalId: 'y', profileCode: 'P1' });
      const d = buildNewMessage({ principalId: 'key-a', createdAt: T0 + 40, recipient: '254700000002', externalId: 'y', profileCode: 'P2' });
      const other = buildNewMessage({ principalId: 'key-b', createdAt: T0 + 25, recipient: '254700000001', externalId: 'x', profileCode: 'P1' });
      await insertEach(storage, [a, b, c, d, other]);
      await storage.finish(b.ref, FAILED, T0 + 50);
      const refs = async (query: Omit<MessageListQuery, 'principalId' | 'limit'>) =>
        (await list({ principalId: 'key-a', limit: 100, ...query })).messages.map((message) => message.ref);
      assert.deepEqual(await refs({ states: ['failed'] }), [b.ref], 'rule: a state filter');
      assert.deepEqual(await refs({ states: ['queued'] }), [d.ref, c.ref, a.ref]);
      assert.deepEqual(await refs({ states: ['queued', 'failed'] }), [d.ref, c.ref, b.ref, a.ref], 'rule: several states, merged newest first');
      assert.deepEqual(await refs({ recipient: '254700000001' }), [c.ref, a.ref], 'rule: a recipient filter');
      assert.deepEqual(await refs({ externalId: 'x' }), [b.ref, a.ref], 'rule: an external id filter');
      assert.deepEqual(await refs({ profileCode: 'P2' }), [d.ref, b.ref], 'rule: a profile filter');
      assert.deepEqual(await refs({ since: T0 + 20, until: T0 + 40 }), [c.ref, b.ref], 'rule: since is inclusive, until exclusive');
      assert.deepEqual(await refs({ recipient: '254700000002', states: ['queued'] }), [d.ref], 'rule: filters together');
      assert.deepEqual(await refs({ externalId: 'y', profileCode: 'P1', since: T0 + 30 }), [c.ref]);
      assert.deepEqual(await refs({ recipient: '254700000001', states: ['failed', 'delivered'] }), []);
      assert.deepEqual(await refs({ externalId: 'X' }), [], 'rule: keys are case-sensitive');
      // Paged with a filter: the cursor of a filtered page goes on in the same filter.
      const first = await list({ principalId: 'key-a', states: ['queued'], limit: 2 });
      assert.deepEqual(first.messages.map((m) => m.ref), [d.ref, c.ref]);
      assert.ok(first.next !== null);
      const second = await list({ principalId: 'key-a', states: ['queued'], limit: 2, after: first.next });
      assert.deepEqual(second.messages.map((m) => m.ref), [a.ref]);
      assert.equal(second.next, null);
    });

    listing('a message leaves the state filter it no longer matches and joins the new one; a purged message leaves every list', async (storage, list) => {
      const messages = Array.from({ length: 4 }, (_, i) => buildNewMessage({ principalId: 'key-a', createdAt: T0 + i }));
      await insertEach(storage, messages);
      await storage.finish(messages[1]!.ref, FAILED, T0 + 100);
      const inState = async (state: 'queued' | 'failed') => (await list({ principalId: 'key-a', states: [state], limit: 10 })).messages.map((m) => m.ref);
      assert.deepEqual(await inState('queued'), [messages[3]!.ref, messages[2]!.ref, messages[0]!.ref]);
      assert.deepEqual(await inState('failed'), [messages[1]!.ref]);
      const failed = (await list({ principalId: 'key-a', states: ['failed'], limit: 10 })).messages[0]!;
      assert.equal(failed.state, 'failed', 'rule: a listed message is in its current state');
      assert.equal(await storage.purge(T0 + 1_000, 10), 1);
      assert.deepEqual(await inState('failed'), [], 'rule: a purged message is listed no more');
      assert.equal((await list({ principalId: 'key-a', limit: 10 })).messages.length, 3);
    });

    listing('pages stay put while messages are stored: a newer message is on no later page, and none is seen twice or lost', async (storage, list) => {
      const before = Array.from({ length: 12 }, (_, i) => buildNewMessage({ principalId: 'key-a', createdAt: T0 + i }));
      await insertEach(storage, before);
      const first = await list({ principalId: 'key-a', limit: 5 });
      const seen = first.messages.map((m) => m.ref);
      let after = first.next;
      let round = 0;
      // Newer messages stored while the client pages, some at the same time as a page is read.
      while (after !== null) {
        const newer = Array.from({ length: 3 }, (_, i) => buildNewMessage({ principalId: 'key-a', createdAt: T0 + 1_000 + round * 10 + i }));
        const [page] = await Promise.all([list({ principalId: 'key-a', limit: 5, after }), insertEach(storage, newer)]);
        seen.push(...page.messages.map((m) => m.ref));
        after = page.next;
        round++;
      }
      assert.deepEqual(seen, newestFirst(before), 'rule: the pages after the first hold exactly the messages older than it, each once, in order');
      const all = await readAll(list, { principalId: 'key-a' }, 7);
      assert.equal(all.length, 12 + round * 3, 'the newer messages are listed from a new first page');
      assert.equal(new Set(all).size, all.length);
    });
  });
}

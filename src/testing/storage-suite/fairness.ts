/**
 * The storage contract suite's tests of one topic. Fair claims (see `Storage.claimMessages`):
 * every claimable transactional message before any bulk one; within a class, the principals
 * with claimable messages take turns, `weight` messages each per turn; within a principal,
 * acceptance order; a message given back for a retry keeps its place. Kept as a topic of its
 * own because it is what stops one customer's campaign from delaying another's one-time
 * password, and an adapter can hand out every message and still get it wrong.
 *
 * The orders asserted are exact: with one writer the contract allows no tolerance. They are
 * those of the bundled adapters' virtual finish tags (storage/fair-tags.ts), reasoned in the
 * comments as tags: a principal's request continues after its last queued tag, spaced
 * 1/weight; a principal with nothing queued in the class starts at the head, the smallest
 * tag a claim could take then (its first message gets that very tag), or the largest tag
 * given when nothing is claimable; claims go by (class, tag, acceptance order). Messages are
 * named for readable failures: principal letter, `t` if transactional, number (A1, Bt2).
 */
import assert from 'node:assert/strict';
import type { InsertLease, NewMessage, Priority, Storage } from '../../storage/contract.js';
import type { SuiteContext } from './context.js';
import { buildNewMessages, LEASE, T0 } from './fixtures.js';

/** How one request of a scene is stored. */
interface Request {
  /** When it is accepted (`createdAt`); default T0. */
  at?: number;
  /** The principal's weight; default 1. */
  weight?: number;
  /** The class; default bulk. */
  priority?: Priority;
  /** Stored leased, as an accepting instance does. */
  lease?: InsertLease;
}

/** A storage under test and the messages stored in it, by name. */
interface Scene {
  /** Stores one request of `count` messages of principal `principal` (a letter), named in order. */
  store: (principal: string, count: number, request?: Request) => Promise<void>;
  /** One claim of up to `limit` at `now`: the names of the messages it leased. */
  claim: (limit: number, now: number, owner?: string) => Promise<string[]>;
  /** `count` claims of one at `now`, each message submitted once claimed (so it leaves the queue), as a worker does. */
  drain: (count: number, now: number) => Promise<string[]>;
  /** Submits the named messages, which leave the queue. */
  submit: (...names: string[]) => Promise<void>;
  /** The named message. */
  message: (name: string) => NewMessage;
}

/** Registers the tests of this topic (see the module comment). */
export function fairnessTests({ describe, test, get, submitAll }: SuiteContext): void {
  function scene(storage: Storage): Scene {
    const byName = new Map<string, NewMessage>();
    const names = new Map<string, string>();
    const counts = new Map<string, number>();
    const claim = async (limit: number, now: number, owner = 'worker') => {
      const claimed = await storage.claimMessages({ owner, limit, leaseMs: LEASE, now });
      return claimed.map((record) => names.get(record.ref) ?? `unknown ${record.ref}`);
    };
    const submit = async (...submitted: string[]) => {
      for (const name of submitted) await submitAll(storage, byName.get(name)!);
    };
    return {
      store: async (principal, count, request = {}) => {
        const priority = request.priority ?? 'bulk';
        const prefix = priority === 'transactional' ? `${principal}t` : principal;
        const messages = buildNewMessages(count, { principalId: `key-${principal}`, priority, weight: request.weight ?? 1, createdAt: request.at ?? T0 });
        for (const message of messages) {
          const number = (counts.get(prefix) ?? 0) + 1;
          counts.set(prefix, number);
          byName.set(`${prefix}${number}`, message);
          names.set(message.ref, `${prefix}${number}`);
        }
        await storage.insertMessages(messages, request.lease);
      },
      claim,
      drain: async (count, now) => {
        const order: string[] = [];
        for (let i = 0; i < count; i++) {
          const claimed = await claim(1, now);
          await submit(...claimed);
          order.push(...claimed);
        }
        return order;
      },
      submit,
      message: (name) => byName.get(name)!,
    };
  }

  describe('fair claims', () => {
    test("a principal's backlog delays another principal's messages by one message each: A1, B1, A2, B2, then the rest of A's", async (storage) => {
      const { store, drain } = scene(storage);
      // A's tags 1..10; B finds A1 at the head (tag 1), so B1 gets 1 and B2 2, each after
      // A's message of the same tag, which was accepted first.
      await store('A', 10);
      await store('B', 2, { at: T0 + 1 });
      assert.deepEqual(await drain(12, T0 + 10), ['A1', 'B1', 'A2', 'B2', 'A3', 'A4', 'A5', 'A6', 'A7', 'A8', 'A9', 'A10']);
    });

    test('three principals with backlogs take turns in the order they first stored', async (storage) => {
      const { store, drain } = scene(storage);
      await store('A', 4);
      await store('B', 4, { at: T0 + 1 });
      await store('C', 4, { at: T0 + 2 });
      // Each has tags 1..4 (B and C start at the head, A1's tag 1).
      assert.deepEqual(await drain(12, T0 + 10), ['A1', 'B1', 'C1', 'A2', 'B2', 'C2', 'A3', 'B3', 'C3', 'A4', 'B4', 'C4']);
    });

    test('a principal of weight 2 has two messages claimed for each one of a principal of weight 1', async (storage) => {
      const { store, drain } = scene(storage);
      // B (weight 1) tags 1..6; A (weight 2) starts at the head (B1, tag 1): 1, 1.5, 2, ... 6.5.
      await store('B', 6, { weight: 1 });
      await store('A', 12, { weight: 2, at: T0 + 1 });
      assert.deepEqual(await drain(18, T0 + 10), [
        ...['B1', 'A1', 'A2'],
        ...['B2', 'A3', 'A4'],
        ...['B3', 'A5', 'A6'],
        ...['B4', 'A7', 'A8'],
        ...['B5', 'A9', 'A10'],
        ...['B6', 'A11', 'A12'],
      ]);
    });

    test('a transactional message stored after a bulk backlog is claimed next, before every bulk message', async (storage) => {
      const { store, drain } = scene(storage);
      // Bulk: A's tags 1..5, B's 1..3. C's transactional message is alone in its class.
      await store('A', 5);
      await store('B', 3, { at: T0 + 1 });
      assert.deepEqual(await drain(2, T0 + 10), ['A1', 'B1']);
      await store('C', 1, { priority: 'transactional', at: T0 + 20 });
      // A's own transactional message goes before A's bulk backlog too.
      await store('A', 1, { priority: 'transactional', at: T0 + 21 });
      assert.deepEqual(await drain(8, T0 + 30), ['Ct1', 'At1', 'A2', 'B2', 'A3', 'B3', 'A4', 'A5']);
    });

    test('principals take turns within the transactional class as within the bulk one, and a claim of several takes transactional first', async (storage) => {
      const { store, claim, drain } = scene(storage);
      // Bulk: A 1..3, B 1. Transactional, a class of its own: A 1..4, B 1..2.
      await store('A', 3);
      await store('B', 1, { at: T0 + 1 });
      await store('A', 4, { priority: 'transactional', at: T0 + 2 });
      await store('B', 2, { priority: 'transactional', at: T0 + 3 });
      assert.deepEqual(await drain(6, T0 + 10), ['At1', 'Bt1', 'At2', 'Bt2', 'At3', 'At4']);
      await store('B', 1, { priority: 'transactional', at: T0 + 20 });
      assert.deepEqual(await claim(10, T0 + 30), ['Bt3', 'A1', 'B1', 'A2', 'A3']);
    });

    test("one principal's messages are claimed in the order they were accepted, across requests and others' requests", async (storage) => {
      const { store, claim } = scene(storage);
      // A: 1, 2, 3, then 4, then 5, 6 (each request continues after A's last tag). B: 1, then
      // 2, 3 (after B1, its last queued tag).
      await store('A', 3);
      await store('B', 1, { at: T0 + 1 });
      await store('A', 1, { at: T0 + 2 });
      await store('A', 2, { at: T0 + 3 });
      await store('B', 2, { at: T0 + 4 });
      assert.deepEqual(await claim(20, T0 + 10), ['A1', 'B1', 'A2', 'B2', 'A3', 'B3', 'A4', 'A5', 'A6']);
    });

    test("a message given back for a retry does not block its principal's others while not due, and is claimed before later ones once due", async (storage) => {
      const { store, claim, drain, message } = scene(storage);
      // A 1..3; B 1, 2 (from the head, A1): A1, B1, A2, B2, A3.
      await store('A', 3);
      await store('B', 2, { at: T0 + 1 });
      assert.deepEqual(await claim(1, T0 + 10), ['A1']);
      await storage.reschedule(message('A1').ref, T0 + 5_000, 'carrier busy', T0 + 20);
      assert.deepEqual(await drain(2, T0 + 30), ['B1', 'A2']);
      // Due, A1 (tag 1) goes before B2 (accepted after it) and A3 (its principal's next).
      assert.deepEqual(await claim(10, T0 + 5_000), ['A1', 'B2', 'A3']);
    });

    test('a message given back for a retry is claimed, once due, before messages accepted while it waited with nothing else queued', async (storage) => {
      const { store, claim, drain, submit, message } = scene(storage);
      await store('A', 3);
      assert.deepEqual(await claim(3, T0 + 10), ['A1', 'A2', 'A3']);
      await submit('A1', 'A2');
      await storage.reschedule(message('A3').ref, T0 + 5_000, 'carrier busy', T0 + 20);
      // Nothing is claimable, so B starts at the largest tag given, A3's 3: tags 3, 4, 5.
      await store('B', 3, { at: T0 + 30 });
      assert.deepEqual(await drain(1, T0 + 40), ['B1']);
      assert.deepEqual(await claim(10, T0 + 5_000), ['A3', 'B2', 'B3']);
    });

    test('a principal that was idle starts its turn at the head each time it returns, gaining no credit for its idle time', async (storage) => {
      const { store, drain } = scene(storage);
      await store('A', 20);
      assert.deepEqual(await drain(3, T0 + 10), ['A1', 'A2', 'A3']);
      // A4 (tag 4) is at the head: B1 gets 4, right after it.
      await store('B', 1, { at: T0 + 20 });
      assert.deepEqual(await drain(5, T0 + 30), ['A4', 'B1', 'A5', 'A6', 'A7']);
      // B, idle since, returns with 3: from the head (A8, tag 8), 8, 9, 10; they alternate
      // with A's rather than go in a row.
      await store('B', 3, { at: T0 + 40 });
      assert.deepEqual(await drain(7, T0 + 50), ['A8', 'B2', 'A9', 'B3', 'A10', 'B4', 'A11']);
    });

    test('a leased message is skipped, and claimed in its place again once its lease ends', async (storage) => {
      const { store, claim, submit } = scene(storage);
      // A 1..4; B 1, 2: A1, B1, A2, B2, A3, A4.
      await store('A', 4);
      await store('B', 2, { at: T0 + 1 });
      assert.deepEqual(await claim(1, T0 + 10, 'w1'), ['A1']);
      assert.deepEqual(await claim(2, T0 + 20, 'w2'), ['B1', 'A2']);
      await submit('B1', 'A2');
      // w1 stopped: A1's lease ends and A1 comes back first.
      assert.deepEqual(await claim(10, T0 + 10 + LEASE, 'w3'), ['A1', 'B2', 'A3', 'A4']);
    });

    test('messages stored under a lease are skipped until it ends, then claimed in their place', async (storage) => {
      const { store, claim } = scene(storage);
      // A 1, 2, leased; nothing is claimable, so B starts at the largest tag given: 2, 3.
      await store('A', 2, { lease: { owner: 'accepting', until: T0 + LEASE } });
      await store('B', 2, { at: T0 + 1 });
      assert.deepEqual(await claim(1, T0 + 10), ['B1']);
      assert.deepEqual(await claim(10, T0 + LEASE), ['A1', 'A2', 'B2']);
    });

    test('each claim takes at most its limit, in fair order', async (storage) => {
      const { store, claim } = scene(storage);
      await store('A', 5);
      await store('B', 5, { at: T0 + 1 });
      assert.deepEqual(await claim(3, T0 + 10), ['A1', 'B1', 'A2']);
      assert.deepEqual(await claim(4, T0 + 10), ['B2', 'A3', 'B3', 'A4']);
      assert.deepEqual(await claim(10, T0 + 10), ['B4', 'A5', 'B5']);
      assert.deepEqual(await claim(10, T0 + 10), []);
    });

    test('records carry their priority, stored and claimed', async (storage) => {
      const { store, claim, message } = scene(storage);
      await store('A', 1);
      await store('A', 1, { priority: 'transactional' });
      assert.equal((await get(storage, message('A1'))).priority, 'bulk');
      assert.equal((await get(storage, message('At1'))).priority, 'transactional');
      const claimed = await storage.claimMessages({ owner: 'worker', limit: 10, leaseMs: LEASE, now: T0 + 10 });
      assert.deepEqual(
        claimed.map((record) => record.priority),
        ['transactional', 'bulk'],
      );
      assert.deepEqual(await claim(10, T0 + 10), []);
    });
  });
}

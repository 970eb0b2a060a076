/**
 * The storage contract suite's tests of one topic. Fair claims (see `Storage.claimMessages`):
 * every claimable transactional message before any bulk one; within a class, the principals
 * with claimable messages take turns, `weight` messages each per turn; within a principal,
 * acceptance order; a message given back for a retry keeps its place. Kept as a topic of its
 * own because it is what stops one customer's campaign from delaying another's one-time
 * password, and an adapter can hand out every message and still get it wrong.
 *
 * Each case plays a scene (stores, claims, retries, submissions, ended leases) and every claim
 * is checked against the rules by a model of the queue ({@link FairOrderCheck}),
 * which names the rule a claim broke. The rules are properties: any order that keeps them
 * passes, not only the bundled adapters' virtual finish tags (`fairTags`). Messages are named
 * for readable failures: principal letter, `t` if transactional, number (A1, Bt2).
 */
import assert from 'node:assert/strict';
import type { InsertLease, NewMessage, Priority, Storage } from '../../storage/contract.js';
import { mulberry32 } from '../../util/mulberry32.js';
import type { SuiteContext } from './context.js';
import { FairOrderCheck } from './fair-order.js';
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

/** A storage under test and the messages stored in it, by name, with every claim checked. */
interface Scene {
  /** Stores one request of `count` messages of principal `principal` (a letter), named in order. */
  store: (principal: string, count: number, request?: Request) => Promise<void>;
  /** One claim of up to `limit` at `now`, checked: the names of the messages it leased. */
  claim: (limit: number, now: number, owner?: string) => Promise<string[]>;
  /** `count` claims of one at `now`, each message submitted once claimed (so it leaves the queue), as a worker does. */
  drain: (count: number, now: number) => Promise<string[]>;
  /** Submits the named messages, which leave the queue. */
  submit: (...names: string[]) => Promise<void>;
  /** Gives the named message back for a retry due at `nextAttemptAt`. */
  reschedule: (name: string, nextAttemptAt: number, now: number) => Promise<void>;
  /** The named message. */
  message: (name: string) => NewMessage;
}

/** Registers the tests of this topic (see the module comment). */
export function fairnessTests({ describe, test, get, submitAll }: SuiteContext): void {
  function scene(storage: Storage): Scene {
    const check = new FairOrderCheck();
    const claim = async (limit: number, now: number, owner = 'worker') => {
      const claimed = await storage.claimMessages({ owner, limit, leaseMs: LEASE, now });
      return check.claimed(claimed, limit, now, LEASE);
    };
    const submit = async (...submitted: string[]) => {
      for (const name of submitted) {
        await submitAll(storage, check.message(name));
        check.submitted(name);
      }
    };
    return {
      store: async (principal, count, request = {}) => {
        const priority = request.priority ?? 'bulk';
        const messages = buildNewMessages(count, { principalId: `key-${principal}`, priority, weight: request.weight ?? 1, createdAt: request.at ?? T0 });
        await storage.insertMessages(messages, request.lease);
        check.stored(messages, priority === 'transactional' ? `${principal}t` : principal, request.lease);
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
      reschedule: async (name, nextAttemptAt, now) => {
        await storage.reschedule(check.message(name).ref, nextAttemptAt, 'carrier busy', now);
        check.rescheduled(name, nextAttemptAt);
      },
      message: (name) => check.message(name),
    };
  }

  describe('fair claims (each claim checked against the rules; any fair order passes)', () => {
    test("a principal's backlog delays another principal's next message by at most one message", async (storage) => {
      const { store, drain } = scene(storage);
      await store('A', 10);
      await store('B', 2, { at: T0 + 1 });
      const order = await drain(12, T0 + 10);
      assert.ok(order.indexOf('B1') <= 1, `B1 is claimed first or second: ${order.join(', ')}`);
    });

    test('three principals with backlogs take turns', async (storage) => {
      const { store, drain } = scene(storage);
      await store('A', 4);
      await store('B', 4, { at: T0 + 1 });
      await store('C', 4, { at: T0 + 2 });
      await drain(12, T0 + 10);
    });

    test('a principal of weight 2 has two messages claimed for each one of a principal of weight 1', async (storage) => {
      const { store, drain } = scene(storage);
      await store('B', 6, { weight: 1 });
      await store('A', 12, { weight: 2, at: T0 + 1 });
      const order = await drain(18, T0 + 10);
      // While both waited (the first 15 or so), A had about two for each of B's.
      const firstTwelve = order.slice(0, 12);
      const a = firstTwelve.filter((name) => name.startsWith('A')).length;
      assert.ok(a >= 7 && a <= 9, `of the first 12 claimed, 8 or so are A's (weight 2 against 1): ${order.join(', ')}`);
    });

    test('weights 3, 2 and 1 are honoured together', async (storage) => {
      const { store, drain } = scene(storage);
      await store('A', 12, { weight: 3 });
      await store('B', 8, { weight: 2, at: T0 + 1 });
      await store('C', 4, { weight: 1, at: T0 + 2 });
      await drain(24, T0 + 10);
    });

    test('a transactional message stored after a bulk backlog is claimed next, before every bulk message', async (storage) => {
      const { store, drain } = scene(storage);
      await store('A', 5);
      await store('B', 3, { at: T0 + 1 });
      await drain(2, T0 + 10);
      await store('C', 1, { priority: 'transactional', at: T0 + 20 });
      // A's own transactional message goes before A's bulk backlog too.
      await store('A', 1, { priority: 'transactional', at: T0 + 21 });
      const order = await drain(8, T0 + 30);
      assert.deepEqual(order.slice(0, 2).sort(), ['At1', 'Ct1']);
    });

    test('principals take turns within the transactional class as within the bulk one, and a claim of several takes transactional first', async (storage) => {
      const { store, claim, drain } = scene(storage);
      await store('A', 3);
      await store('B', 1, { at: T0 + 1 });
      await store('A', 4, { priority: 'transactional', at: T0 + 2 });
      await store('B', 2, { priority: 'transactional', at: T0 + 3 });
      await drain(6, T0 + 10);
      await store('B', 1, { priority: 'transactional', at: T0 + 20 });
      assert.equal((await claim(10, T0 + 30))[0], 'Bt3');
    });

    test("one principal's messages are claimed in the order they were accepted, across requests and others' requests", async (storage) => {
      const { store, claim } = scene(storage);
      await store('A', 3);
      await store('B', 1, { at: T0 + 1 });
      await store('A', 1, { at: T0 + 2 });
      await store('A', 2, { at: T0 + 3 });
      await store('B', 2, { at: T0 + 4 });
      await claim(20, T0 + 10);
    });

    test("a message given back for a retry does not block its principal's others while not due, and is claimed before later ones once due", async (storage) => {
      const { store, claim, drain, reschedule } = scene(storage);
      await store('A', 3);
      await store('B', 2, { at: T0 + 1 });
      assert.deepEqual(await claim(1, T0 + 10), ['A1']);
      await reschedule('A1', T0 + 5_000, T0 + 20);
      await drain(2, T0 + 30);
      await claim(10, T0 + 5_000);
    });

    test('a message given back for a retry is claimed within a turn once due, with messages accepted while it waited', async (storage) => {
      const { store, claim, drain, submit, reschedule } = scene(storage);
      await store('A', 3);
      await claim(3, T0 + 10);
      await submit('A1', 'A2');
      await reschedule('A3', T0 + 5_000, T0 + 20);
      await store('B', 3, { at: T0 + 30 });
      await drain(1, T0 + 40);
      const order = await claim(10, T0 + 5_000);
      assert.ok(order.indexOf('A3') <= 1, `A3 is claimed within a turn of coming due: ${order.join(', ')}`);
    });

    test('a principal that was idle gains no credit for its idle time: it takes turns with the others when it returns', async (storage) => {
      const { store, drain } = scene(storage);
      await store('A', 20);
      await drain(3, T0 + 10);
      await store('B', 1, { at: T0 + 20 });
      await drain(5, T0 + 30);
      // B, idle since, returns with 3: they alternate with A's rather than go in a row.
      await store('B', 3, { at: T0 + 40 });
      await drain(7, T0 + 50);
    });

    test('a leased message is skipped, and claimed again once its lease ends', async (storage) => {
      const { store, claim, submit } = scene(storage);
      await store('A', 4);
      await store('B', 2, { at: T0 + 1 });
      const [first] = await claim(1, T0 + 10, 'w1');
      const next = await claim(2, T0 + 20, 'w2');
      assert.ok(!next.includes(first!), 'a leased message is not claimed by another owner');
      await submit(...next);
      // w1 stopped: the lease ends and its message comes back.
      const after = await claim(10, T0 + 10 + LEASE, 'w3');
      assert.ok(after.includes(first!), `${first} is claimed again once its lease ended: ${after.join(', ')}`);
    });

    test('messages stored under a lease are skipped until it ends, then claimed with the rest', async (storage) => {
      const { store, claim } = scene(storage);
      await store('A', 2, { lease: { owner: 'accepting', until: T0 + LEASE } });
      await store('B', 2, { at: T0 + 1 });
      assert.deepEqual(await claim(1, T0 + 10), ['B1']);
      assert.deepEqual((await claim(10, T0 + LEASE)).sort(), ['A1', 'A2', 'B2']);
    });

    test('each claim takes at most its limit, in fair order', async (storage) => {
      const { store, claim } = scene(storage);
      await store('A', 5);
      await store('B', 5, { at: T0 + 1 });
      assert.equal((await claim(3, T0 + 10)).length, 3);
      assert.equal((await claim(4, T0 + 10)).length, 4);
      assert.equal((await claim(10, T0 + 10)).length, 3);
      assert.deepEqual(await claim(10, T0 + 10), []);
    });

    test('keeps the rules through a random walk of stores, claims, retries, submissions and ended leases', async (storage) => {
      const { store, claim, submit, reschedule } = scene(storage);
      const random = mulberry32(40);
      const principals = [
        { name: 'A', weight: 1 },
        { name: 'B', weight: 1 },
        { name: 'C', weight: 2 },
        { name: 'D', weight: 3 },
      ];
      let now = T0;
      const held: string[] = [];
      for (let step = 0; step < 120; step++) {
        now += 1 + Math.floor(random() * 200);
        const roll = random();
        if (roll < 0.3) {
          const p = principals[Math.floor(random() * principals.length)]!;
          const priority: Priority = random() < 0.25 ? 'transactional' : 'bulk';
          await store(p.name, 1 + Math.floor(random() * 4), { at: now, weight: p.weight, priority });
        } else if (roll < 0.75) {
          held.push(...(await claim(1 + Math.floor(random() * 3), now)));
        } else if (held.length > 0) {
          const name = held.splice(Math.floor(random() * held.length), 1)[0]!;
          const fate = random();
          // Submitted, given back for a retry, or left to its lease (a crashed owner).
          if (fate < 0.6) await submit(name);
          else if (fate < 0.85) await reschedule(name, now + Math.floor(random() * 2 * LEASE), now);
        }
      }
    });

    test('records carry their priority, stored and claimed', async (storage) => {
      const { store, claim, message } = scene(storage);
      await store('A', 1);
      await store('A', 1, { priority: 'transactional' });
      assert.equal((await get(storage, message('A1'))).priority, 'bulk');
      assert.equal((await get(storage, message('At1'))).priority, 'transactional');
      assert.deepEqual(await claim(10, T0 + 10), ['At1', 'A1']);
      assert.deepEqual(await claim(10, T0 + 10), []);
    });
  });
}

/**
 * Fair queues on PostgreSQL: the claim order the contract defines (transactional
 * first, principals in turn by weight, each one's messages in acceptance order) held by the
 * tags the insert computes, with several instances on one schema (each with its own pool,
 * as processes would be), and kept cheap: the insert's lookups and the claim read a few
 * index entries, not the backlog, in a schema not yet analyzed.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { MessageRecord, NewMessage } from '../../src/storage/contract.js';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { buildNewMessage } from '../../src/testing/storage-suite/index.js';
import { makePool, postgresUnavailable } from '../helpers/services.js';

const admin = makePool(2);
const unreachable = await postgresUnavailable(admin);
if (unreachable !== null) console.warn(`PostgresStorage fairness tests skipped: ${unreachable}`);

afterAll(async () => {
  await admin.end();
});

const T0 = 1_700_000_000_000;
const LEASE = 60_000;

/** Runs `fn` with `count` storages on one fresh schema, each with its own pool, then drops it. */
async function withInstances(
  count: number,
  fn: (instances: PostgresStorage[], schema: string, pools: pg.Pool[]) => Promise<void>,
  poolSize = 4,
): Promise<void> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const pools = Array.from({ length: count }, () => makePool(poolSize));
  try {
    await fn(
      pools.map((pool) => new PostgresStorage({ pool, schema })),
      schema,
      pools,
    );
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
}

/** `count` messages of `principalId`, texts `<prefix><i>`. */
function messagesOf(principalId: string, count: number, overrides: Partial<NewMessage> = {}, prefix = principalId): NewMessage[] {
  return Array.from({ length: count }, (_, i) => buildNewMessage({ principalId, createdAt: T0, text: `${prefix}${i}`, ...overrides }));
}

/** Claims everything claimable at `now` in batches of `limit`; the principals in claim order. */
async function drain(storage: PostgresStorage, now: number, limit = 7): Promise<MessageRecord[]> {
  const claimed: MessageRecord[] = [];
  for (;;) {
    const batch = await storage.claimMessages({ owner: 'w', limit, leaseMs: LEASE, now });
    if (batch.length === 0) return claimed;
    claimed.push(...batch);
  }
}

const dbDescribe = unreachable === null ? describe : describe.skip;

dbDescribe('PostgresStorage fair queues', () => {
  it('claims transactional before bulk, principals in turn by weight, each in acceptance order', async () => {
    await withInstances(1, async ([storage]) => {
      await storage!.insertMessages(messagesOf('A', 6));
      await storage!.insertMessages(messagesOf('B', 6, { weight: 2 }));
      await storage!.insertMessages(messagesOf('C', 2, { priority: 'transactional' }));
      const order = (await drain(storage!, T0 + 1)).map((m) => `${m.text}/${m.priority}`);
      expect(order).toEqual([
        'C0/transactional', 'C1/transactional',
        // A's tags 1..6; B (weight 2) starts at the head (A0's 1): 1, 1.5, 2, 2.5, 3, 3.5; ties by acceptance.
        'A0/bulk', 'B0/bulk', 'B1/bulk', 'A1/bulk', 'B2/bulk', 'B3/bulk', 'A2/bulk', 'B4/bulk', 'B5/bulk', 'A3/bulk',
        'A4/bulk', 'A5/bulk',
      ]);
    });
  });

  it('gives a principal that was idle its turn at the head, not behind the backlog or ahead of it', async () => {
    await withInstances(1, async ([storage]) => {
      await storage!.insertMessages(messagesOf('A', 50));
      const first = await storage!.claimMessages({ owner: 'w', limit: 20, leaseMs: LEASE, now: T0 + 1 });
      expect(first.map((m) => m.text)).toEqual(Array.from({ length: 20 }, (_, i) => `A${i}`));
      // B's tags start at the head of what is claimable (A20's 21), not at 1 (ahead of every
      // turn of A's still to come) and not after A49.
      await storage!.insertMessages(messagesOf('B', 2));
      const next = await storage!.claimMessages({ owner: 'w', limit: 5, leaseMs: LEASE, now: T0 + 2 });
      expect(next.map((m) => m.text)).toEqual(['A20', 'B0', 'A21', 'B1', 'A22']);
    });
  });

  it('keeps one principal\'s requests stored together in one statement in acceptance order, turns with another', async () => {
    await withInstances(1, async ([storage]) => {
      // Issued in one turn of the event loop: the batcher sends them as one statement.
      await Promise.all([
        storage!.insertMessages(messagesOf('A', 3, {}, 'A')),
        storage!.insertMessages(messagesOf('B', 2, {}, 'B')),
        storage!.insertMessages(messagesOf('A', 3, {}, 'a')),
      ]);
      const order = (await drain(storage!, T0 + 1)).map((m) => m.text);
      expect(order).toEqual(['A0', 'B0', 'A1', 'B1', 'A2', 'a0', 'a1', 'a2']);
    });
  });

  it('a message given back for a retry keeps its place and goes first once due', async () => {
    await withInstances(1, async ([storage]) => {
      await storage!.insertMessages(messagesOf('A', 4));
      const [a0] = await storage!.claimMessages({ owner: 'w', limit: 1, leaseMs: LEASE, now: T0 + 1 });
      await storage!.reschedule(a0!.ref, T0 + 100, 'throttled', T0 + 2);
      await storage!.insertMessages(messagesOf('B', 1));
      // B starts at the head (A1, tag 2), after A1 (same tag, stored first); A0 is not due.
      expect((await storage!.claimMessages({ owner: 'w', limit: 2, leaseMs: LEASE, now: T0 + 3 })).map((m) => m.text)).toEqual(['A1', 'B0']);
      // Due, A0 (tag 1) goes first.
      expect((await storage!.claimMessages({ owner: 'w', limit: 2, leaseMs: LEASE, now: T0 + 100 })).map((m) => m.text)).toEqual(['A0', 'A2']);
    });
  });

  it('two instances claiming at once stay fair together: B is claimed within the first claims after it is stored, nothing twice', async () => {
    await withInstances(2, async ([a, b], schema) => {
      // A's backlog, stored on both instances (10 requests of 100 each, concurrently).
      const backlog = messagesOf('A', 2_000);
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a! : b!).insertMessages(backlog.slice(i * 100, (i + 1) * 100))),
      );

      const claims: { loop: number; started: number; ended: number; refs: string[]; texts: string[] }[] = [];
      let clock = 0; // a logical clock: claim starts and ends and B's stores, in order
      const claimedBy = new Map<string, number>();
      const loop = async (storage: PostgresStorage, id: number): Promise<void> => {
        for (;;) {
          const started = ++clock;
          const batch = await storage.claimMessages({ owner: `w${id}`, limit: 16, leaseMs: LEASE, now: T0 + 1_000 });
          const ended = ++clock;
          if (batch.length === 0) return;
          claims.push({ loop: id, started, ended, refs: batch.map((m) => m.ref), texts: batch.map((m) => m.text) });
          for (const m of batch) claimedBy.set(m.ref, (claimedBy.get(m.ref) ?? 0) + 1);
          // The work: each claimed message submitted, so it leaves the queue.
          await Promise.all(batch.map((m) => storage.recordSubmission(m.ref, 0, `c-${m.ref}`, T0 + 1_001)));
          // Paced, so that A's backlog lasts while B stores its messages.
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      };
      const loops = [loop(a!, 1), loop(a!, 2), loop(b!, 3), loop(b!, 4)];

      // Once A's backlog is being worked on, B stores five one-message requests, one at a
      // time, alternating instances.
      while (claimedBy.size < 300) await new Promise((resolve) => setTimeout(resolve, 2));
      const bStored: { ref: string; at: number; aClaimedBefore: number }[] = [];
      for (let i = 0; i < 5; i++) {
        const [message] = messagesOf('B', 1, { createdAt: T0 + 500 }, `B${i}-`);
        await (i % 2 === 0 ? b! : a!).insertMessages([message!]);
        bStored.push({ ref: message!.ref, at: ++clock, aClaimedBefore: claimedBy.size });
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await Promise.all(loops);

      // Every message claimed exactly once (the leases hold throughout: now never moves past them).
      expect(claimedBy.size).toBe(2_005);
      expect([...claimedBy.values()].every((n) => n === 1)).toBe(true);
      const { rows } = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".ledger_messages WHERE queue IS NOT NULL`);
      expect(rows[0]!.n).toBe(0);

      for (const stored of bStored) {
        const claim = claims.find((c) => c.refs.includes(stored.ref))!;
        // Claims that began after B's message was stored, up to the one that took it: at most
        // one per loop (a claim sees every message committed before it began, and B's tag is
        // within a turn of the head).
        const after = claims.filter((c) => c.started > stored.at && c.ended <= claim.ended);
        expect(after.length).toBeLessThanOrEqual(4);
        // B came while A's backlog was there (most of it still queued): the case that counts.
        expect(stored.aClaimedBefore).toBeLessThan(1_000);
      }
    }, 6);
  });

  it('reads a few index entries, not the backlog, to tag an insert, in a schema without statistics, even past a window of leased messages', async () => {
    const single = makePool(1);
    const schema = `t_${randomBytes(6).toString('hex')}`;
    try {
      const storage = new PostgresStorage({ pool: single, schema });
      // A backlog over many principals, and one principal with a long one.
      for (let i = 0; i < 10; i++) {
        await storage.insertMessages(Array.from({ length: 2_000 }, (_, k) => buildNewMessage({ principalId: `p${(i * 2_000 + k) % 500}`, createdAt: T0 })));
      }
      await storage.insertMessages(messagesOf('A', 10_000));
      const reads = async (): Promise<number> => {
        await single.query('SELECT pg_stat_force_next_flush()');
        const { rows } = await admin.query<{ reads: string }>(
          `SELECT sum(idx_tup_read) AS reads FROM pg_stat_user_indexes
          WHERE schemaname = $1 AND indexrelname IN ('ledger_messages_claim_partial', 'ledger_messages_principal_queue_partial')`,
          [schema],
        );
        return Number(rows[0]!.reads);
      };
      const late = async (principal: string): Promise<number> => {
        const before = await reads();
        await storage.insertMessages(messagesOf(principal, 100, { createdAt: T0 + 2 }, `${principal}-late-`));
        return (await reads()) - before;
      };
      // The head is the first entry; the principal's last tag the last of its own.
      await storage.claimMessages({ owner: 'w', limit: 100, leaseMs: LEASE, now: T0 + 1 });
      for (const principal of ['A', 'p7', 'new']) expect(await late(principal)).toBeLessThan(300);
      // Three thousand claimed and still leased at the front of the queue (a worker's window,
      // or a carrier that stopped): the head's lookup stops after a thousand, and a newcomer's
      // turn still comes at once.
      await storage.claimMessages({ owner: 'w', limit: 3_000, leaseMs: LEASE, now: T0 + 2 });
      // (Up to twice a thousand entries: the claim's updates left a dead entry beside each
      // leased one until a scan marks them; unbounded, the lookup read over 6,000.)
      for (const principal of ['A', 'p8', 'newer']) expect(await late(principal)).toBeLessThan(2_500);
      const next = await storage.claimMessages({ owner: 'w', limit: 256, leaseMs: LEASE, now: T0 + 3 });
      expect(next.map((m) => m.text)).toContain('newer-late-0');
    } finally {
      await single.end();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});

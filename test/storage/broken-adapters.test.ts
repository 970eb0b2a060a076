/**
 * The contract suite fails broken adapters, and passes a fair order other than the bundled
 * one. Each case wraps the memory storage into an adapter with one known fault (or a
 * different claim order), runs the whole suite against it through a collecting describe/it
 * shim (so its failures are captured, not reported), and asserts which cases failed.
 */
import { describe, expect, it } from 'vitest';
import {
  InsufficientCreditError,
  isTerminal,
  MemoryStorage,
  refundUnits,
  type ClaimOptions,
  type CreditCharge,
  type IdempotencyRecord,
  type InsertLease,
  type MessageRecord,
  type NewMessage,
  type PartReceipt,
  type Priority,
  type RefundPolicy,
  type Storage,
  type Transition,
  type UnitCounter,
} from '../../src/index.js';
import { runStorageContract } from '../../src/testing.js';
import { mulberry32 } from '../../src/util/mulberry32.js';
import { runCollected, wrap, type SuiteRun } from '../helpers/suite-run.js';

/** Runs the whole contract suite against the storages `create` makes, through a collecting shim. */
function runSuite(create: () => Storage, only?: RegExp): Promise<SuiteRun> {
  return runCollected((harness) => runStorageContract(harness, { name: 'under test', create: async () => create() }), { only });
}

/** The names of the failed cases. */
const names = (run: SuiteRun) => run.failed.map((f) => f.name);

describe('the storage contract suite', () => {
  it('passes the memory storage run through the same shim (the control)', async () => {
    const run = await runSuite(() => new MemoryStorage());
    expect(run.ran).toBeGreaterThan(100);
    expect(run.failed).toEqual([]);
  });

  it('fails an adapter that drops the outcome of a late receipt', async () => {
    const run = await runSuite(() => {
      const inner = new MemoryStorage();
      const dropped = new Map<string, Set<string>>();
      const forget = (record: MessageRecord | null): MessageRecord | null => {
        const ids = record === null ? undefined : dropped.get(record.ref);
        if (record !== null && ids !== undefined) for (const part of record.parts) if (part.carrierId !== null && ids.has(part.carrierId)) part.outcome = null;
        return record;
      };
      return wrap(inner, {
        applyReceipt: async (receipt: PartReceipt) => {
          const result = await inner.applyReceipt(receipt);
          if (result.kind === 'late') {
            const ids = dropped.get(result.ref) ?? new Set<string>();
            for (const id of receipt.carrierIds) ids.add(id);
            dropped.set(result.ref, ids);
          }
          return result;
        },
        getMessage: async (principalId: string, ref: string) => forget(await inner.getMessage(principalId, ref)),
      });
    });
    expect(names(run)).toContain('storage contract: under test > applyReceipt > is late for a message the worker already ended, which keeps its state');
    expect(run.failed.some((f) => f.message.includes("late receipt's outcome is kept on its part"))).toBe(true);
  });

  it('fails an adapter that ignores case in keys (a case-insensitive collation)', async () => {
    const run = await runSuite(() => {
      const inner = new MemoryStorage();
      const refs = new Map<string, string>();
      const sent: { principalId: string; externalId: string; ref: string }[] = [];
      const keys = new Map<string, { principalId: string; key: string; expiresAt: number }>();
      const fold = (text: string) => text.toLowerCase();
      return wrap(inner, {
        insertMessages: async (messages: readonly NewMessage[], lease?: InsertLease, idempotency?: IdempotencyRecord, credit?: CreditCharge, counters?: readonly UnitCounter[]) => {
          for (const m of messages) if (refs.has(fold(m.ref))) throw new Error(`Duplicate entry '${m.ref}' for key 'ref'`);
          if (idempotency !== undefined) {
            const held = keys.get(fold(`${idempotency.principalId}\n${idempotency.key}`));
            if (held !== undefined && held.expiresAt > idempotency.createdAt) throw new Error(`Duplicate entry '${idempotency.key}'`);
          }
          const counted = await inner.insertMessages(messages, lease, idempotency, credit, counters);
          for (const m of messages) {
            refs.set(fold(m.ref), m.ref);
            sent.push({ principalId: m.principalId, externalId: m.externalId, ref: m.ref });
          }
          if (idempotency !== undefined) keys.set(fold(`${idempotency.principalId}\n${idempotency.key}`), idempotency);
          return counted;
        },
        getMessage: async (principalId: string, ref: string) => {
          const record = await inner.getMessage(principalId, refs.get(fold(ref)) ?? ref);
          if (record !== null) return record;
          const stored = sent.find((s) => fold(s.ref) === fold(ref) && fold(s.principalId) === fold(principalId));
          return stored === undefined ? null : inner.getMessage(stored.principalId, stored.ref);
        },
        findByExternalId: async (principalId: string, externalId: string, limit: number) => {
          const found: MessageRecord[] = [];
          for (const s of sent) {
            if (fold(s.principalId) !== fold(principalId) || fold(s.externalId) !== fold(externalId)) continue;
            const record = await inner.getMessage(s.principalId, s.ref);
            if (record !== null) found.push(record);
          }
          return found.sort((a, b) => b.createdAt - a.createdAt).slice(0, limit);
        },
        findIdempotency: (principalId: string, key: string, now: number) => {
          const held = keys.get(fold(`${principalId}\n${key}`));
          return held === undefined ? null : inner.findIdempotency(held.principalId, held.key, now);
        },
        recordSubmission: (ref: string, index: number, carrierId: string, now: number) => inner.recordSubmission(refs.get(fold(ref)) ?? ref, index, carrierId, now),
      });
    });
    expect(run.failed.length).toBeGreaterThan(0);
    // Every case it fails is about case: the case-sensitive keys topic, or an assertion that says so.
    expect(run.failed.filter((f) => !`${f.name} ${f.message}`.includes('case-sensitive'))).toEqual([]);
    expect(names(run)).toContain('storage contract: under test > keys are case-sensitive > refs that differ only in case are two messages, each found by its own spelling only');
  });

  it('fails an adapter whose claims under contention now and then return nothing while messages are free', async () => {
    const run = await runSuite(() => {
      const inner = new MemoryStorage();
      // Seeded: the same claims come back empty on every run. One claim in 8 that meets another
      // in flight finds every row locked and gives up, as a SKIP LOCKED scan that stops early does.
      const random = mulberry32(8);
      let inFlight = 0;
      return wrap(inner, {
        claimMessages: async (options: ClaimOptions) => {
          inFlight++;
          try {
            const contended = inFlight > 1;
            const claimed = await inner.claimMessages(options);
            if (contended && random() < 1 / 8) {
              // Gives back what it leased: nothing was claimed.
              for (const record of claimed) await inner.reschedule(record.ref, options.now, 'lock timeout', options.now);
              return [];
            }
            return claimed;
          } finally {
            inFlight--;
          }
        },
      });
    });
    expect(names(run)).toEqual(['storage contract: under test > claimMessages > two concurrent claimers get disjoint sets that cover every free message (50 rounds)']);
    expect(run.failed[0]!.message).toContain('a claim must not come back short while messages are free');
  });

  it('fails an adapter that loses the carrier id of a stale submission', async () => {
    const run = await runSuite(() => {
      const inner = new MemoryStorage();
      const principals = new Map<string, string>();
      return wrap(inner, {
        insertMessages: async (messages: readonly NewMessage[], ...rest: [InsertLease?, IdempotencyRecord?, CreditCharge?, (readonly UnitCounter[])?]) => {
          const counted = await inner.insertMessages(messages, ...rest);
          for (const m of messages) principals.set(m.ref, m.principalId);
          return counted;
        },
        recordSubmission: async (ref: string, index: number, carrierId: string, now: number) => {
          const principalId = principals.get(ref);
          const record = principalId === undefined ? null : await inner.getMessage(principalId, ref);
          if (record === null || record.state !== 'queued') return { kind: 'stale', ref };
          return inner.recordSubmission(ref, index, carrierId, now);
        },
      });
    });
    expect(names(run)).toContain('storage contract: under test > recordSubmission > is stale for a terminal message or an unknown ref, yet a receipt for it is matched as late');
    expect(run.failed.some((f) => f.message.includes('a stale submission still stores its carrier id'))).toBe(true);
  });

  it('fails an adapter whose credit charge reads the balance and writes it back in two steps', async () => {
    const run = await runSuite(() => {
      const inner = new MemoryStorage();
      // The ledger kept apart from the messages, as two tables without one transaction would.
      const balances = new Map<string, number>();
      const charges = new Map<string, { units: number; refunds: RefundPolicy }>();
      const refund = (transition: Transition | null) => {
        if (transition === null) return transition;
        const charge = charges.get(transition.message.ref);
        if (charge !== undefined && isTerminal(transition.message.state)) {
          charges.delete(transition.message.ref);
          const units = refundUnits(transition.previousState, transition.message, charge.refunds);
          balances.set(transition.message.principalId, (balances.get(transition.message.principalId) ?? 0) + units);
        }
        return transition;
      };
      const refundAll = (transitions: Transition[]) => (transitions.forEach(refund), transitions);
      return wrap(inner, {
        topUpCredit: async (principalId: string, units: number) => {
          balances.set(principalId, (balances.get(principalId) ?? 0) + units);
          return balances.get(principalId)!;
        },
        creditBalance: async (principalId: string) => balances.get(principalId) ?? 0,
        insertMessages: async (messages: readonly NewMessage[], lease?: InsertLease, idempotency?: IdempotencyRecord, credit?: CreditCharge, counters?: readonly UnitCounter[]) => {
          if (credit === undefined) return inner.insertMessages(messages, lease, idempotency, undefined, counters);
          const balance = balances.get(credit.principalId) ?? 0;
          if (balance < credit.units) throw new InsufficientCreditError(credit.units, balance);
          const counted = await inner.insertMessages(messages, lease, idempotency, undefined, counters);
          // Written back from what was read before the insert's round trip.
          balances.set(credit.principalId, balance - credit.units);
          for (const m of messages) charges.set(m.ref, { units: m.smsCount, refunds: credit.refunds });
          return counted;
        },
        finish: async (...args: Parameters<Storage['finish']>) => refund(await inner.finish(...args)),
        applyReceipt: async (receipt: PartReceipt) => {
          const result = await inner.applyReceipt(receipt);
          if (result.kind === 'terminal') refund(result.transition);
          return result;
        },
        expireOverdue: async (...args: Parameters<Storage['expireOverdue']>) => refundAll(await inner.expireOverdue(...args)),
        expireUnsent: async (now: number, limit: number) => refundAll(await inner.expireUnsent(now, limit)),
        promoteScheduled: async (now: number, limit: number) => refundAll(await inner.promoteScheduled(now, limit)),
        cancelMessages: async (principalId: string, refs: readonly string[], now: number) => {
          const result = await inner.cancelMessages(principalId, refs, now);
          refundAll(result.cancelled);
          return result;
        },
      });
    });
    expect(names(run)).toEqual(['storage contract: under test > credit ledger > never spends more than the balance when requests race for it (50 rounds)']);
  });

  describe('fair claims', () => {
    const fairness = /fair claims/;

    it('fails an adapter that claims in acceptance order across principals (first in, first out)', async () => {
      const run = await runSuite(() => claimsBy(new MemoryStorage(), fifo), fairness);
      expect(run.failed.some((f) => f.message.includes('principals with claimable messages take turns'))).toBe(true);
    });

    it('fails an adapter that takes turns but ignores weights', async () => {
      const run = await runSuite(() => claimsBy(new MemoryStorage(), roundRobin(() => 1)), fairness);
      expect(run.failed.some((f) => f.message.includes('weights are honoured'))).toBe(true);
    });

    it('fails an adapter that claims bulk before transactional', async () => {
      const run = await runSuite(() => claimsBy(new MemoryStorage(), roundRobin((m) => m.weight, ['bulk', 'transactional'])), fairness);
      expect(run.failed.some((f) => f.message.includes('every claimable transactional message before any bulk one'))).toBe(true);
    });

    it('passes a fair order other than the bundled one: weighted round robin over principals', async () => {
      const run = await runSuite(() => claimsBy(new MemoryStorage(), roundRobin((m) => m.weight)), fairness);
      expect(run.ran).toBeGreaterThan(10);
      expect(run.failed).toEqual([]);
    });
  });
});

/** One queued message as an order-choosing adapter sees it. */
interface Queued {
  message: NewMessage;
  seq: number;
  dueAt: number;
  leaseUntil: number | null;
}

/** Picks the next message from the claimable ones (at least one). */
type Order = (claimable: readonly Queued[]) => Queued;

/** Claims in acceptance order, whoever sent them. */
const fifo: Order = (claimable) => claimable.reduce((a, b) => (b.seq < a.seq ? b : a));

/**
 * Round robin over principals in the order they first stored, `weightOf` messages each per
 * turn, classes in `classes` order: the principal's earliest accepted claimable message.
 */
function roundRobin(weightOf: (message: NewMessage) => number, classes: readonly Priority[] = ['transactional', 'bulk']): Order {
  // Each class takes its turns apart: a ring of principals, whose turn it is, and what is left of it.
  const turns = new Map<Priority, { ring: string[]; current: string | null; left: number }>();
  return (claimable) => {
    const priority = classes.find((c) => claimable.some((q) => q.message.priority === c))!;
    const inClass = claimable.filter((q) => q.message.priority === priority);
    const turn = turns.get(priority) ?? { ring: [], current: null, left: 0 };
    turns.set(priority, turn);
    for (const q of inClass) if (!turn.ring.includes(q.message.principalId)) turn.ring.push(q.message.principalId);
    const has = (p: string) => inClass.some((q) => q.message.principalId === p);
    if (turn.current === null || turn.left <= 0 || !has(turn.current)) {
      let i = turn.current === null ? 0 : (turn.ring.indexOf(turn.current) + 1) % turn.ring.length;
      while (!has(turn.ring[i]!)) i = (i + 1) % turn.ring.length;
      turn.current = turn.ring[i]!;
      turn.left = weightOf(inClass.find((q) => q.message.principalId === turn.current)!.message);
    }
    turn.left--;
    return inClass.filter((q) => q.message.principalId === turn.current).reduce((a, b) => (b.seq < a.seq ? b : a));
  };
}

/**
 * `inner`, whose claims go in the order `order` picks: the adapter keeps its own queue (due
 * times, leases) beside the memory storage, which keeps everything else.
 */
function claimsBy(inner: MemoryStorage, order: Order): Storage {
  const queued = new Map<string, Queued>();
  let seq = 0;
  const leave = (ref: string) => queued.delete(ref);
  return wrap(inner, {
    insertMessages: async (messages: readonly NewMessage[], lease?: InsertLease, ...rest: [IdempotencyRecord?, CreditCharge?, (readonly UnitCounter[])?]) => {
      const counted = await inner.insertMessages(messages, lease, ...rest);
      for (const message of messages) queued.set(message.ref, { message, seq: seq++, dueAt: message.createdAt, leaseUntil: lease?.until ?? null });
      return counted;
    },
    claimMessages: async ({ limit, leaseMs, now }: ClaimOptions) => {
      const claimed: MessageRecord[] = [];
      const free = [...queued.values()].filter((q) => q.dueAt <= now && (q.leaseUntil === null || q.leaseUntil <= now));
      while (claimed.length < limit && free.length > 0) {
        const next = order(free);
        free.splice(free.indexOf(next), 1);
        next.leaseUntil = now + leaseMs;
        claimed.push((await inner.getMessage(next.message.principalId, next.message.ref))!);
      }
      return claimed;
    },
    reschedule: async (ref: string, nextAttemptAt: number, error: string, now: number) => {
      await inner.reschedule(ref, nextAttemptAt, error, now);
      const q = queued.get(ref);
      if (q !== undefined) Object.assign(q, { dueAt: nextAttemptAt, leaseUntil: null });
    },
    recordSubmission: async (ref: string, index: number, carrierId: string, now: number) => {
      const result = await inner.recordSubmission(ref, index, carrierId, now);
      if (result.kind === 'submitted') leave(ref);
      return result;
    },
  });
}

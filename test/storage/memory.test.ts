import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { outcome } from '../../src/lifecycle/states.js';
import { fairTags, PRIORITY_RANK } from '../../src/lifecycle/fair-tags.js';
import { MemoryStorage } from '../../src/storage/memory/adapter.js';
import { mulberry32 } from '../../src/util/mulberry32.js';
import { buildNewMessage, runStorageContract } from '../../src/testing/storage-suite/index.js';
import type { NewMessage, Priority } from '../../src/storage/contract.js';

runStorageContract({ describe, it }, { name: 'MemoryStorage', create: async () => new MemoryStorage() });

describe('MemoryStorage', () => {
  it('gives back every idempotency record exactly as stored, whatever its fields hold', async () => {
    // Any text (lone surrogates too) and any time must come back as it went in, and a
    // principal id with a comma is told from its neighbours as any other.
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          key: fc.string({ minLength: 1 }),
          bodyHash: fc.string(),
          status: fc.integer({ min: 100, max: 599 }),
          body: fc.string({ unit: 'binary' }),
          // `+ 0` turns -0 into 0: no clock says -0, and its decimal text is "0".
          createdAt: fc.double({ min: -1e15, max: 1e15, noNaN: true }).map((time) => time + 0),
          lifetime: fc.double({ min: 1e-3, max: 1e12, noNaN: true }),
        }),
        async ({ lifetime, ...fields }) => {
          const storage = new MemoryStorage();
          const record = { principalId: 'p,1', ...fields, expiresAt: fields.createdAt + lifetime };
          fc.pre(record.expiresAt > record.createdAt);
          await storage.insertMessages([buildNewMessage()], undefined, record);
          expect(await storage.findIdempotency('p,1', record.key, record.createdAt)).toEqual(record);
          expect(await storage.findIdempotency('p,1', record.key, record.expiresAt)).toBeNull();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps each instance to itself', async () => {
    const one = new MemoryStorage();
    const two = new MemoryStorage();
    const message = buildNewMessage();
    await one.insertMessages([message]);
    expect(await two.getMessage(message.principalId, message.ref)).toBeNull();
    expect(await one.getMessage(message.principalId, message.ref)).not.toBeNull();
  });

  it('claims reports in the order a walk and sort of every pending report gives, under random claims, defers, retries and lease ends', async () => {
    // The model is the plain algorithm: look at every pending report, keep those unleased and
    // due, sort by when each became due (its next attempt, or the end of a lease or deferral
    // that held it past that: `claimCallbacks` takes the oldest due first), then by its next
    // attempt, then by age; take `limit`, lease them.
    interface Modelled { uid: string; seq: number; nextAttemptAt: number; leaseUntil: number | null; pending: boolean }
    const random = mulberry32(11);
    const storage = new MemoryStorage();
    const messages = Array.from({ length: 40 }, () => buildNewMessage({ callbackUrl: 'https://client.example/dlr', createdAt: 0 }));
    await storage.insertMessages(messages);
    const model: Modelled[] = [];
    for (const [i, message] of messages.entries()) {
      const at = Math.floor(random() * 50);
      const transition = await storage.finish(message.ref, outcome('delivered', 'delivered_to_terminal'), at);
      expect(transition?.message.callback?.state).toBe('pending');
      model.push({ uid: '', seq: i, nextAttemptAt: at, leaseUntil: null, pending: true });
    }
    const byRef = new Map(messages.map((message, i) => [message.ref, model[i]!]));
    // A lease (a claim's, or a deferral's) ends after the next attempt was due: the report is due again from its end.
    const dueSince = (m: Modelled) => m.leaseUntil ?? m.nextAttemptAt;
    let now = 0;
    let claims = 0;
    for (let step = 0; step < 400; step++) {
      now += Math.floor(random() * 40);
      const limit = 1 + Math.floor(random() * 5);
      const expected = model
        .filter((m) => m.pending && (m.leaseUntil === null || m.leaseUntil <= now) && m.nextAttemptAt <= now)
        .sort((a, b) => dueSince(a) - dueSince(b) || a.nextAttemptAt - b.nextAttemptAt || a.seq - b.seq)
        .slice(0, limit);
      const claimed = await storage.claimCallbacks({ owner: 'd', limit, leaseMs: 200, now });
      expect(claimed.map((c) => byRef.get(c.message.ref)!.seq)).toEqual(expected.map((m) => m.seq));
      claims += claimed.length;
      for (const due of claimed) {
        const m = byRef.get(due.message.ref)!;
        m.uid = due.uid;
        m.leaseUntil = now + 200;
        const roll = random();
        if (roll < 0.25) continue; // left to its lease, as a crashed sender would
        if (roll < 0.45) {
          m.leaseUntil = now + 30;
          await storage.deferCallbacks([due.uid], m.leaseUntil);
        } else if (roll < 0.8) {
          m.leaseUntil = null;
          m.nextAttemptAt = now + Math.floor(random() * 100);
          await storage.recordCallbackAttempt(due.uid, { result: 'retry', statusCode: 503, error: 'HTTP 503', nextAttemptAt: m.nextAttemptAt, now });
        } else {
          m.pending = false;
          await storage.recordCallbackAttempt(due.uid, { result: 'delivered', statusCode: 204, error: null, nextAttemptAt: null, now });
        }
      }
    }
    // The walk went somewhere: many claims, and reports of every fate.
    expect(claims).toBeGreaterThan(100);
    expect(model.some((m) => !m.pending)).toBe(true);
  });

  it('claims messages in the order a walk and sort of every queued message by (class, tag, acceptance) gives, under random stores, claims, retries, submissions and lease ends', async () => {
    // The model is the plain algorithm the heaps replace: tags from the principal's largest
    // queued tag and the class's smallest claimable one (else its largest queued, as
    // `fairTags` asks), and a claim that looks at every queued message, keeps the due and
    // unleased, and sorts them.
    interface Modelled { ref: string; seq: number; principal: string; rank: number; tag: number; queued: boolean; nextAttemptAt: number; leaseUntil: number | null }
    const random = mulberry32(26);
    const storage = new MemoryStorage();
    const model: Modelled[] = [];
    const claimable = (m: Modelled, now: number) => m.queued && m.nextAttemptAt <= now && (m.leaseUntil === null || m.leaseUntil <= now);
    let now = 0;
    let claimedCount = 0;
    let retried = 0;
    for (let step = 0; step < 1_500; step++) {
      // Mostly forward; now and then a caller whose clock is a little behind.
      now += random() < 0.1 ? -Math.floor(random() * 30) : Math.floor(random() * 40);
      const roll = random();
      if (roll < 0.35) {
        const principal = `p${Math.floor(random() * 6)}`;
        const priority: Priority = random() < 0.3 ? 'transactional' : 'bulk';
        const rank = PRIORITY_RANK[priority];
        const weight = [1, 2, 0.5][Math.floor(random() * 3)]!;
        const count = random() < 0.1 ? 20 + Math.floor(random() * 60) : 1 + Math.floor(random() * 4);
        const leased = random() < 0.2;
        const claimableTags = model.filter((m) => m.rank === rank && claimable(m, now)).map((m) => m.tag);
        const queuedTags = model.filter((m) => m.rank === rank && m.queued).map((m) => m.tag);
        const largestQueued = queuedTags.length > 0 ? Math.max(...queuedTags) : null;
        const head = claimableTags.length > 0 ? Math.min(...claimableTags) : largestQueued;
        const ownTags = model.filter((m) => m.queued && m.rank === rank && m.principal === principal).map((m) => m.tag);
        const tags = fairTags(count, weight, ownTags.length > 0 ? Math.max(...ownTags) : null, head);
        const messages: NewMessage[] = tags.map(() => buildNewMessage({ principalId: principal, priority, weight, createdAt: now }));
        const leaseUntil = leased ? now + 100 : null;
        await storage.insertMessages(messages, leased ? { owner: 'accepting', until: now + 100 } : undefined);
        messages.forEach((message, i) => {
          model.push({ ref: message.ref, seq: model.length, principal, rank, tag: tags[i]!, queued: true, nextAttemptAt: now, leaseUntil });
        });
        continue;
      }
      const limit = 1 + Math.floor(random() * 5);
      const expected = model
        .filter((m) => claimable(m, now))
        .sort((a, b) => a.rank - b.rank || a.tag - b.tag || a.seq - b.seq)
        .slice(0, limit);
      const claimed = await storage.claimMessages({ owner: 'w', limit, leaseMs: 150, now });
      expect(claimed.map((c) => c.ref)).toEqual(expected.map((m) => m.ref));
      claimedCount += claimed.length;
      for (const m of expected) {
        m.leaseUntil = now + 150;
        const fate = random();
        if (fate < 0.2) continue; // left to its lease, as a crashed worker would
        if (fate < 0.45) {
          retried++;
          m.leaseUntil = null;
          m.nextAttemptAt = now + Math.floor(random() * 200);
          await storage.reschedule(m.ref, m.nextAttemptAt, 'busy', now);
        } else if (fate < 0.9) {
          m.queued = false;
          await storage.recordSubmission(m.ref, 0, `c-${m.ref}`, now);
        } else {
          m.queued = false;
          await storage.finish(m.ref, outcome('failed', 'unknown'), now);
        }
      }
    }
    // The walk went somewhere: many claims, retries, and a queue that filled and drained.
    expect(claimedCount).toBeGreaterThan(300);
    expect(retried).toBeGreaterThan(50);
  });
});

import { describe, expect, it } from 'vitest';
import { outcome } from '../../src/lifecycle/states.js';
import { MemoryStorage } from '../../src/storage/memory/adapter.js';
import { mulberry32 } from '../../src/util/mulberry32.js';
import { buildNewMessage, runStorageContract } from '../../src/testing/storage-suite/index.js';

runStorageContract({ describe, it }, { name: 'MemoryStorage', create: async () => new MemoryStorage() });

describe('MemoryStorage', () => {
  it('keeps each instance to itself', async () => {
    const one = new MemoryStorage();
    const two = new MemoryStorage();
    const message = buildNewMessage();
    await one.insertMessages([message]);
    expect(await two.getMessage(message.principalId, message.ref)).toBeNull();
    expect(await one.getMessage(message.principalId, message.ref)).not.toBeNull();
  });

  it('claims reports in the order a walk and sort of every pending report gives, under random claims, defers, retries and lease ends', async () => {
    // The model is the plain algorithm the due queue replaced: look at every pending report,
    // keep those unleased and due, sort by (next attempt, age), take `limit`, lease them.
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
    let now = 0;
    let claims = 0;
    for (let step = 0; step < 400; step++) {
      now += Math.floor(random() * 40);
      const limit = 1 + Math.floor(random() * 5);
      const expected = model
        .filter((m) => m.pending && (m.leaseUntil === null || m.leaseUntil <= now) && m.nextAttemptAt <= now)
        .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.seq - b.seq)
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
});

/**
 * Several service instances on one MariaDB database, each with its own pool and the
 * library's ledger over its own MysqlRecordStore, as processes behind a load balancer would
 * run: claims, submissions, receipts and reports racing across them.
 */
import { expect, it } from 'vitest';
import { createLedger } from '../../src/ledger/index.js';
import { outcome } from '../../src/lifecycle/states.js';
import type { Storage } from '../../src/storage/contract.js';
import { MysqlRecordStore } from '../../src/storage/mysql/adapter.js';
import { buildNewMessage } from '../../src/testing/storage-suite/index.js';
import { dbDescribe, freshPrefix, makeMysqlPool, useMysql } from './mysql-setup.js';

useMysql();

const T0 = 1_700_000_000_000;
const LEASE = 30_000;
const DELIVERED = outcome('delivered', 'delivered_to_terminal');

/** Runs `fn` with `count` instances on one fresh set of tables, each with its own pool of 4. */
async function withInstances(count: number, fn: (instances: Storage[], prefix: string) => Promise<void>): Promise<void> {
  const tablePrefix = freshPrefix();
  const pools = Array.from({ length: count }, () => makeMysqlPool(4));
  try {
    const instances = pools.map((own) => createLedger(new MysqlRecordStore({ pool: own, tablePrefix })));
    await Promise.all(instances.map((instance) => instance.ready?.()));
    await fn(instances, tablePrefix);
  } finally {
    await Promise.all(pools.map((own) => own.end()));
  }
}

dbDescribe('MysqlRecordStore across instances', () => {
  it('two instances claiming 1,000 messages with two loops each get disjoint sets covering all', async () => {
    await withInstances(2, async ([a, b]) => {
      const messages = Array.from({ length: 1_000 }, (_, i) => buildNewMessage({ principalId: `p${i % 5}`, createdAt: T0 + (i % 97) }));
      await a!.insertMessages(messages);
      const claimed = new Map<string, string[]>([
        ['a', []],
        ['b', []],
      ]);
      const loop = async (storage: Storage, owner: string): Promise<void> => {
        for (;;) {
          const batch = await storage.claimMessages({ owner, limit: 25, leaseMs: LEASE, now: T0 + 1_000 });
          if (batch.length === 0) return;
          claimed.get(owner[0]!)!.push(...batch.map((record) => record.ref));
        }
      };
      await Promise.all([loop(a!, 'a1'), loop(a!, 'a2'), loop(b!, 'b1'), loop(b!, 'b2')]);
      const all = [...claimed.get('a')!, ...claimed.get('b')!];
      expect(all.length).toBe(1_000);
      expect(new Set(all)).toEqual(new Set(messages.map((message) => message.ref)));
      expect(claimed.get('a')!.length).toBeGreaterThan(0);
      expect(claimed.get('b')!.length).toBeGreaterThan(0);
    });
  });

  it('the parts of one message recorded on two instances at once submit it exactly once', async () => {
    await withInstances(2, async ([a, b]) => {
      const messages = Array.from({ length: 40 }, () => buildNewMessage({ smsCount: 2 }));
      await a!.insertMessages(messages);
      const results = await Promise.all(
        messages.flatMap((message) => [
          a!.recordSubmission(message.ref, 0, `${message.ref}-0`, T0 + 1),
          b!.recordSubmission(message.ref, 1, `${message.ref}-1`, T0 + 1),
        ]),
      );
      for (let i = 0; i < messages.length; i++) {
        expect([results[2 * i]!.kind, results[2 * i + 1]!.kind].sort()).toEqual(['part', 'submitted']);
      }
    });
  });

  it('receipts for two parts applied on two instances at once end the message once, with one report', async () => {
    await withInstances(2, async ([a, b]) => {
      const messages = Array.from({ length: 40 }, () => buildNewMessage({ smsCount: 2, callbackUrl: 'https://client.example/dlr' }));
      await a!.insertMessages(messages);
      for (const message of messages) {
        await a!.recordSubmission(message.ref, 0, `${message.ref}-0`, T0 + 1);
        await a!.recordSubmission(message.ref, 1, `${message.ref}-1`, T0 + 1);
      }
      const results = await Promise.all(
        messages.flatMap((message) => [
          a!.applyReceipt({ carrierIds: [`${message.ref}-0`], outcome: DELIVERED, now: T0 + 10 }),
          b!.applyReceipt({ carrierIds: [`${message.ref}-1`], outcome: DELIVERED, now: T0 + 10 }),
        ]),
      );
      for (let i = 0; i < messages.length; i++) {
        expect([results[2 * i]!.kind, results[2 * i + 1]!.kind].sort()).toEqual(['part', 'terminal']);
        expect((await b!.getMessage(messages[i]!.principalId, messages[i]!.ref))?.state).toBe('delivered');
      }
      const [reportsA, reportsB] = await Promise.all([
        a!.claimCallbacks({ owner: 'a', limit: 100, leaseMs: LEASE, now: T0 + 20 }),
        b!.claimCallbacks({ owner: 'b', limit: 100, leaseMs: LEASE, now: T0 + 20 }),
      ]);
      const refs = [...reportsA, ...reportsB].map((due) => due.message.ref);
      expect(refs.length).toBe(messages.length);
      expect(new Set(refs)).toEqual(new Set(messages.map((message) => message.ref)));
    });
  });

  it('delivery reports claimed on two instances at once go to one of them each', async () => {
    await withInstances(2, async ([a, b]) => {
      const messages = Array.from({ length: 60 }, () => buildNewMessage({ callbackUrl: 'https://client.example/dlr' }));
      await a!.insertMessages(messages);
      for (const message of messages) await a!.finish(message.ref, DELIVERED, T0 + 5);
      const [fromA, fromB] = await Promise.all([
        a!.claimCallbacks({ owner: 'a', limit: 40, leaseMs: LEASE, now: T0 + 10 }),
        b!.claimCallbacks({ owner: 'b', limit: 40, leaseMs: LEASE, now: T0 + 10 }),
      ]);
      const uids = [...fromA, ...fromB].map((due) => due.uid);
      expect(new Set(uids).size).toBe(60);
    });
  });

  it('inbound webhooks claimed on two instances at once go to one of them each', async () => {
    await withInstances(2, async ([a, b]) => {
      for (let i = 0; i < 60; i++) {
        await a!.insertInbound!({
          ref: `mo-${i}`, principalId: 'acme', profileCode: '22021', from: '254700000001', to: '22021', text: `hi ${i}`,
          receivedAt: T0 + i, callbackUrl: 'https://client.example/inbound', callbackSecret: null, uid: `uid-${i}`,
        });
      }
      const [fromA, fromB] = await Promise.all([
        a!.claimInbound!({ owner: 'a', limit: 40, leaseMs: LEASE, now: T0 + 100 }),
        b!.claimInbound!({ owner: 'b', limit: 40, leaseMs: LEASE, now: T0 + 100 }),
      ]);
      const uids = [...fromA, ...fromB].map((due) => due.uid);
      expect(new Set(uids).size).toBe(60);
    });
  });

  it('the parts of one long MO stored on two instances at once: the last one stored sees them all (20 rounds)', async () => {
    await withInstances(2, async ([a, b]) => {
      const total = 6;
      for (let round = 0; round < 20; round++) {
        const results = await Promise.all(
          Array.from({ length: total }, (_, i) =>
            (i % 2 === 0 ? a! : b!).storeInboundPart!({ key: `long-${round}`, seq: i + 1, total, text: `part ${i + 1}. `, receivedAt: T0 }),
          ),
        );
        const seen = results.map((parts) => parts.length).sort((x, y) => x - y);
        expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
      }
    });
  });

  it('what one instance writes the other reads', async () => {
    await withInstances(2, async ([a, b]) => {
      const message = buildNewMessage();
      await a!.insertMessages([message]);
      const [claimed] = await b!.claimMessages({ owner: 'b', limit: 1, leaseMs: LEASE, now: T0 });
      expect(claimed?.ref).toBe(message.ref);
      expect((await a!.getMessage(message.principalId, message.ref))?.state).toBe('queued');
    });
  });
});


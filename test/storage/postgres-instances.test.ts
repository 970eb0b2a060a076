import { randomBytes } from 'node:crypto';
import { makePool, postgresUnavailable } from '../helpers/services.js';
import { afterAll, describe, expect, it } from 'vitest';
import { outcome } from '../../src/lifecycle/states.js';
import type { MessageRecord } from '../../src/storage/contract.js';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { buildNewMessage } from '../../src/testing/storage-suite/index.js';

// Several service instances share one schema, each with its own pool, as processes
// behind a load balancer would.


const admin = makePool(2);
const unreachable = await postgresUnavailable(admin);
if (unreachable !== null) console.warn(`PostgresStorage instance tests skipped: ${unreachable}`);

afterAll(async () => {
  await admin.end();
});

const T0 = 1_700_000_000_000;
const LEASE = 30_000;
const DELIVERED = outcome('delivered', 'delivered_to_terminal');

/** Runs `fn` with `count` instances on one fresh schema, each with its own pool. */
async function withInstances(
  count: number,
  fn: (instances: PostgresStorage[], schema: string) => Promise<void>,
): Promise<void> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const pools = Array.from({ length: count }, () => makePool(4));
  try {
    await fn(
      pools.map((pool) => new PostgresStorage({ pool, schema })),
      schema,
    );
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
}

(unreachable === null ? describe : describe.skip)('PostgresStorage across instances', () => {
  it('five instances starting together create the schema once', async () => {
    await withInstances(5, async (instances, schema) => {
      await Promise.all(instances.map((instance) => instance.ready()));
      const versions = async () => [
        (await admin.query(`SELECT version, count(*)::int AS n FROM "${schema}".ledger_schema_version GROUP BY version ORDER BY version`)).rows,
        (await admin.query(`SELECT version, count(*)::int AS n FROM "${schema}".migrations GROUP BY version ORDER BY version`)).rows,
      ];
      const first = await versions();
      expect(first).toEqual([[1, 2, 3, 4, 5, 6, 7].map((version) => ({ version, n: 1 })), [{ version: 12, n: 1 }]]);
      // A later start finds everything in place and applies nothing again.
      await withInstancesOnSchema(schema, async (late) => {
        await late.ready();
      });
      expect(await versions()).toEqual(first);
    });
  });

  it('two instances claiming 1,000 messages concurrently get disjoint sets covering all', async () => {
    await withInstances(2, async ([a, b]) => {
      const messages = Array.from({ length: 1_000 }, (_, i) => buildNewMessage({ createdAt: T0 + (i % 97) }));
      await a!.insertMessages(messages);
      const claimed = new Map<string, string[]>([
        ['a', []],
        ['b', []],
      ]);
      // Each instance runs two claim loops, as a worker with some concurrency would.
      const loop = async (storage: PostgresStorage, owner: string): Promise<void> => {
        for (;;) {
          const batch = await storage.claimMessages({ owner, limit: 25, leaseMs: LEASE, now: T0 + 1_000 });
          if (batch.length === 0) return;
          claimed.get(owner[0]!)!.push(...batch.map((record) => record.ref));
        }
      };
      await Promise.all([loop(a!, 'a1'), loop(a!, 'a2'), loop(b!, 'b1'), loop(b!, 'b2')]);
      const fromA = claimed.get('a')!;
      const fromB = claimed.get('b')!;
      const all = [...fromA, ...fromB];
      expect(all.length).toBe(1_000);
      expect(new Set(all)).toEqual(new Set(messages.map((message) => message.ref)));
      expect(fromA.length).toBeGreaterThan(0);
      expect(fromB.length).toBeGreaterThan(0);
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
        const kinds = [results[2 * i]!.kind, results[2 * i + 1]!.kind].sort();
        expect(kinds).toEqual(['part', 'submitted']);
      }
    });
  });

  it('receipts for two parts applied on two instances at once end the message once, with one report', async () => {
    await withInstances(2, async ([a, b], schema) => {
      const messages = Array.from({ length: 40 }, () =>
        buildNewMessage({ smsCount: 2, callbackUrl: 'https://client.example/dlr' }),
      );
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
        const kinds = [results[2 * i]!.kind, results[2 * i + 1]!.kind].sort();
        expect(kinds).toEqual(['part', 'terminal']);
        const record = await b!.getMessage(messages[i]!.principalId, messages[i]!.ref);
        expect(record?.state).toBe('delivered');
      }
      const reports = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".ledger_messages WHERE report_due_at IS NOT NULL`);
      expect(reports.rows).toEqual([{ n: messages.length }]);
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
      expect(new Set(uids).size).toBe(uids.length);
      expect(uids.length).toBe(60);
    });
  });

  it('what one instance writes the other reads', async () => {
    await withInstances(2, async ([a, b]) => {
      const message = buildNewMessage();
      await a!.insertMessages([message]);
      const [claimed] = await b!.claimMessages({ owner: 'b', limit: 1, leaseMs: LEASE, now: T0 });
      expect(claimed?.ref).toBe(message.ref);
      const seen: MessageRecord | null = await a!.getMessage(message.principalId, message.ref);
      expect(seen?.state).toBe('queued');
    });
  });
});

/** One more instance, with its own pool, on an existing schema. */
async function withInstancesOnSchema(schema: string, fn: (storage: PostgresStorage) => Promise<void>): Promise<void> {
  const pool = makePool(2);
  try {
    await fn(new PostgresStorage({ pool, schema }));
  } finally {
    await pool.end();
  }
}

/**
 * Idempotency keys across instances on PostgreSQL: two instances (each with its own pool, as
 * two processes behind a load balancer) that receive the same key at once store one request's
 * messages, at the storage and through the HTTP endpoints; and an insert whose key another
 * transaction is still writing waits for it, then stores or refuses as that one ended.
 */
import { randomBytes } from 'node:crypto';
import express from 'express';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { createSmsRouter, SimulatorDelivery, type IdempotencyRecord } from '../../src/index.js';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { buildNewMessage, buildNewMessages } from '../../src/testing/storage-suite/fixtures.js';
import { eventually } from '../helpers/poll.js';
import { KEY, testKeys } from '../helpers/gateway.js';
import { makePool, postgresUnavailable } from '../helpers/services.js';

const admin = makePool(2);
const unreachable = await postgresUnavailable(admin);
if (unreachable !== null) console.warn(`PostgreSQL idempotency tests skipped: ${unreachable}`);

afterAll(async () => {
  await admin.end();
});

const T0 = 1_700_000_000_000;

/** Runs `fn` with two instances on one fresh schema, each with its own pool. */
async function withTwo(fn: (instances: [PostgresStorage, PostgresStorage], schema: string) => Promise<void>): Promise<void> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const pools = [makePool(6), makePool(6)];
  try {
    const instances = pools.map((pool) => new PostgresStorage({ pool, schema })) as [PostgresStorage, PostgresStorage];
    await Promise.all(instances.map((instance) => instance.ready()));
    await fn(instances, schema);
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
}

function record(key: string, bodyHash: string): IdempotencyRecord {
  return { principalId: 'principal-a', key, bodyHash, status: 200, body: `[${bodyHash}]`, createdAt: T0, expiresAt: T0 + 3_600_000 };
}

(unreachable === null ? describe : describe.skip)('idempotency keys across PostgreSQL instances', () => {
  it('two instances storing 40 keys at once, each key from both, store each key\u2019s messages once', async () => {
    await withTwo(async ([a, b], schema) => {
      const keys = Array.from({ length: 40 }, (_, i) => `race-${i}`);
      const sides = keys.map((key) => ({
        key,
        a: buildNewMessages(2, { externalId: `${key}-a` }),
        b: buildNewMessages(2, { externalId: `${key}-b` }),
      }));
      // Every call at once: each instance batches its own into shared statements.
      const results = await Promise.allSettled(
        sides.flatMap(({ key, a: fromA, b: fromB }) => [
          a.insertMessages(fromA, undefined, record(key, 'a')),
          b.insertMessages(fromB, undefined, record(key, 'b')),
        ]),
      );
      for (const [i, { key }] of sides.entries()) {
        const [ra, rb] = [results[2 * i]!, results[2 * i + 1]!];
        expect([ra.status, rb.status].sort(), key).toEqual(['fulfilled', 'rejected']);
        const winner = ra.status === 'fulfilled' ? 'a' : 'b';
        const kept = await b.findIdempotency('principal-a', key, T0);
        expect(kept?.bodyHash, key).toBe(winner);
      }
      const { rows } = await admin.query<{ external_id: string; n: number }>(
        `SELECT external_id, count(*)::int AS n FROM "${schema}".ledger_messages GROUP BY external_id`,
      );
      // Exactly one side of each key, both of its messages.
      expect(rows).toHaveLength(keys.length);
      expect(rows.every((row) => row.n === 2)).toBe(true);
    });
  });

  it('an insert whose key another transaction is writing waits for it: refused after its commit, stored after its rollback', async () => {
    await withTwo(async ([a], schema) => {
      for (const ending of ['COMMIT', 'ROLLBACK'] as const) {
        const key = `held-${ending}`;
        const holder = await admin.connect();
        try {
          await holder.query('BEGIN');
          await holder.query(
            `INSERT INTO "${schema}".ledger_idempotency (principal_id, idem_key, body_hash, status, body, created_at, expires_at)
             VALUES ('principal-a', $1, 'other', 200, '[]', $2, $3)`,
            [key, T0, T0 + 3_600_000],
          );
          const message = buildNewMessage();
          let settled = false;
          const inserting = a.insertMessages([message], undefined, record(key, 'mine')).finally(() => (settled = true));
          inserting.catch(() => undefined);
          // The insert waits on the other transaction's row, and stays unanswered meanwhile.
          await eventually(async () => {
            const { rows } = await admin.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '."ledger_idempotency"%'`,
              [`"${schema}"`],
            );
            return rows[0]!.n > 0;
          }, { what: 'the insert waiting for the key row' });
          expect(settled).toBe(false);
          await holder.query(ending);
          if (ending === 'COMMIT') {
            await expect(inserting).rejects.toThrow(/taken/);
            expect(await a.getMessage('principal-a', message.ref)).toBeNull();
          } else {
            await inserting;
            expect(await a.getMessage('principal-a', message.ref)).not.toBeNull();
            expect((await a.findIdempotency('principal-a', key, T0))?.bodyHash).toBe('mine');
          }
        } finally {
          holder.release();
        }
      }
    });
  });

  it('two routers on one schema answering the same keys at once send each request once, and both answers are the same', async () => {
    await withTwo(async ([a, b], schema) => {
      const apps = [a, b].map((storage, i) => {
        const sms = createSmsRouter({
          verifyKey: testKeys,
          storage,
          instanceId: `instance-${i}`,
          delivery: new SimulatorDelivery({ seed: i, latencyMs: [1, 5] }),
          rateLimit: false,
        });
        sms.on('error', () => undefined);
        return { sms, app: express().use(sms) };
      });
      try {
        const keys = Array.from({ length: 20 }, (_, i) => `order-${i}`);
        const answers = await Promise.all(
          keys.flatMap((key) =>
            apps.map(({ app }) =>
              request(app)
                .post('/api/outbox/create')
                .set('X-API-Key', KEY)
                .set('Idempotency-Key', key)
                .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Hi', external_id: key }] }),
            ),
          ),
        );
        for (const [i, key] of keys.entries()) {
          const [one, two] = [answers[2 * i]!, answers[2 * i + 1]!];
          expect([one.status, two.status], key).toEqual([200, 200]);
          expect(two.text, key).toBe(one.text);
        }
        const { rows } = await admin.query<{ external_id: string; n: number }>(
          `SELECT external_id, count(*)::int AS n FROM "${schema}".ledger_messages GROUP BY external_id ORDER BY external_id`,
        );
        expect(rows).toHaveLength(keys.length);
        expect(rows.every((row) => row.n === 1)).toBe(true);
      } finally {
        for (const { sms } of apps) await sms.close();
      }
    });
  });
});

/**
 * PostgresStorage's plans on a backlog it has no statistics for: claims, report attempts
 * and overdue messages read the oldest rows, not every one.
 */
import { makePool } from '../helpers/services.js';
import { expect, it } from 'vitest';
import { outcome } from '../../src/lifecycle/states.js';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { buildNewMessage } from '../../src/testing/storage-suite/index.js';
import { dbDescribe, dropSchema, freshSchema, indexReads, pool, usePostgres } from './postgres-setup.js';

usePostgres();

dbDescribe('PostgresStorage', () => {
  it('claims from a backlog it has no statistics for by reading the oldest queued rows, not every one, and without compiling the claim', async () => {
    // A new schema has no statistics until autovacuum first analyzes it. Without them the
    // planner chose, for each claim, a bitmap scan of every queued row and a sort (134 ms a
    // claim at 146,000 queued in the benchmark, against 0.2 ms reading the index in order),
    // and costed the claim so high that PostgreSQL compiled it with JIT first (300-450 ms).
    const single = makePool(1);
    // The one connection's plans, as auto_explain logs them (sent here as notices).
    const plans: string[] = [];
    single.on('connect', (client) => client.on('notice', (notice) => plans.push(notice.message ?? '')));
    const schema = freshSchema();
    try {
      const storage = new PostgresStorage({ pool: single, schema });
      const backlog = Array.from({ length: 30_000 }, (_, i) => buildNewMessage({ createdAt: 1_000 + i }));
      for (let i = 0; i < backlog.length; i += 3_000) await storage.insertMessages(backlog.slice(i, i + 3_000));
      const explained = await single
        .query(`LOAD 'auto_explain'`)
        .then(() => single.query(`SET auto_explain.log_min_duration = 0; SET client_min_messages = log`))
        .then(
          () => true,
          (error: unknown) => {
            console.warn(`PostgresStorage: the claim's plan is not checked for JIT (auto_explain: ${String(error)})`);
            return false;
          },
        );

      const queuedIndexReads = () => indexReads(single, schema, 'ledger_messages_claim_partial');
      const before = await queuedIndexReads();
      const claimed = await storage.claimMessages({ owner: 'w', limit: 64, leaseMs: 60_000, now: 100_000 });
      expect(claimed.map((message) => message.ref)).toEqual(backlog.slice(0, 64).map((message) => message.ref));
      const read = (await queuedIndexReads()) - before;
      expect(read).toBeGreaterThanOrEqual(64);
      expect(read).toBeLessThan(1_000);
      if (explained) {
        const claimPlan = plans.find((plan) => plan.includes('SKIP LOCKED') && plan.includes('lease_owner'));
        expect(claimPlan).toBeDefined();
        expect(claimPlan).not.toMatch(/JIT:/);
      }
    } finally {
      await single.end();
      await dropSchema(schema);
    }
  });

  it('records report attempts by their uids, not by reading every pending report, in a schema it has no statistics for', async () => {
    // An attempt is a compare-and-set write of its message's row, by its ref: no statement
    // reads the pending reports' index to find it.
    const single = makePool(1);
    const schema = freshSchema();
    try {
      const storage = new PostgresStorage({ pool: single, schema });
      const messages = Array.from({ length: 5_000 }, (_, i) => buildNewMessage({ callbackUrl: 'https://client.example/dlr', createdAt: 1_000 + i }));
      for (let i = 0; i < messages.length; i += 1_000) await storage.insertMessages(messages.slice(i, i + 1_000));
      for (const message of messages) await storage.finish(message.ref, outcome('delivered', 'delivered_to_terminal'), 2_000);
      const due = await storage.claimCallbacks({ owner: 'o', limit: 64, leaseMs: 60_000, now: 3_000 });
      expect(due).toHaveLength(64);

      const pendingIndexReads = () => indexReads(single, schema, 'ledger_messages_report_partial');
      const before = await pendingIndexReads();
      await Promise.all(
        due.map(({ uid }) => storage.recordCallbackAttempt(uid, { result: 'delivered', statusCode: 200, error: null, nextAttemptAt: null, now: 4_000 })),
      );
      expect((await pendingIndexReads()) - before).toBeLessThan(1_000);
      for (const { message } of due.slice(0, 3)) {
        expect((await storage.getMessage(message.principalId, message.ref))?.callback).toMatchObject({ state: 'delivered', attempts: 1 });
      }
      const stillPending = await single.query(`SELECT count(*)::int AS n FROM "${schema}".ledger_messages WHERE report_due_at IS NOT NULL`);
      expect(stillPending.rows[0]).toEqual({ n: messages.length - 64 });
    } finally {
      await single.end();
      await dropSchema(schema);
    }
  }, 120_000); // 5,000 messages ended one call at a time on one connection: seconds when quiet, more on a loaded machine

  it('ends overdue messages from a backlog it has no statistics for by reading the oldest, not every one', async () => {
    // A carrier that stops sending receipts leaves every message submitted; each sweep of
    // expireOverdue then read and sorted all of them (a bitmap scan) in a schema not yet
    // analyzed.
    const single = makePool(1);
    const schema = freshSchema();
    try {
      const storage = new PostgresStorage({ pool: single, schema });
      const submitted = Array.from({ length: 10_000 }, (_, i) => buildNewMessage({ createdAt: i }));
      await storage.insertMessages(submitted);
      for (let i = 0; i < submitted.length; i += 1_000) {
        await Promise.all(
          submitted.slice(i, i + 1_000).map((message, k) => storage.recordSubmission(message.ref, 0, `c-${i + k}`, 10_000 + i + k)),
        );
      }
      const overdueIndexReads = () => indexReads(single, schema, 'ledger_messages_timer_partial');
      const before = await overdueIndexReads();
      const ended = await storage.expireOverdue(1e12, 100, outcome('expired', 'expired'), 2e12);
      expect(ended.map((transition) => transition.message.ref)).toEqual(submitted.slice(0, 100).map((message) => message.ref));
      const read = (await overdueIndexReads()) - before;
      expect(read).toBeGreaterThanOrEqual(100);
      expect(read).toBeLessThan(1_000);
    } finally {
      await single.end();
      await dropSchema(schema);
    }
  });
});

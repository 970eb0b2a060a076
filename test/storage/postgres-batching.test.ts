/**
 * PostgresStorage in few round trips: a request's messages in two (the class's ends, then
 * the rows), concurrent calls in shared statements (each answered as alone), and each
 * per-message step in a read and a compare-and-set write at most, no transaction.
 */
import { expect, it } from 'vitest';
import { outcome } from '../../src/lifecycle/states.js';
import type { Outcome, PartReceipt, ReceiptResult, Storage } from '../../src/storage/contract.js';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { buildNewMessage } from '../../src/testing/storage-suite/index.js';
import { dbDescribe, dropSchema, freshSchema, pool, usePostgres, withCountedStorage } from './postgres-setup.js';
import { PACKED } from '../helpers/packed-row.js';

usePostgres();

dbDescribe('PostgresStorage', () => {
  it('inserts 1,000 messages in two round trips, each with its parts', async () => {
    await withCountedStorage(async ({ storage, queries, schema }) => {
      await storage.ready();
      const messages = Array.from({ length: 1_000 }, (_, i) => buildNewMessage({ smsCount: (i % 3) + 1 }));
      queries.count = 0;
      await storage.insertMessages(messages);
      expect(queries.count).toBe(2);
      const { rows } = await pool.query<{ messages: string; parts: string }>(
        `SELECT count(*) AS messages, sum(jsonb_array_length(data::jsonb -> ${PACKED.parts})) AS parts FROM "${schema}".ledger_messages`,
      );
      expect(rows[0]).toEqual({ messages: '1000', parts: String(messages.reduce((sum, m) => sum + m.smsCount, 0)) });
    });
  });

  it('stores concurrent requests in one statement, and a request that fails fails alone', async () => {
    await withCountedStorage(async ({ storage, queries }) => {
      const taken = buildNewMessage();
      await storage.insertMessages([taken]);
      const requests = Array.from({ length: 20 }, () => [buildNewMessage(), buildNewMessage({ smsCount: 2 })]);
      queries.count = 0;
      expect(await Promise.all(requests.map((messages) => storage.insertMessages(messages)))).toHaveLength(20);
      // The 20 reads of the class's ends in one statement, the 20 inserts in another.
      expect(queries.count).toBeLessThanOrEqual(2);

      const again = [[buildNewMessage()], [buildNewMessage(), { ...taken }], [buildNewMessage()]];
      const outcomes = await Promise.allSettled(again.map((messages) => storage.insertMessages(messages)));
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      for (const [i, messages] of again.entries()) {
        for (const message of messages) {
          const stored = await storage.getMessage(message.principalId, message.ref);
          // The failed request stored none of its messages; `taken` was there before.
          expect(stored !== null).toBe(i !== 1 || message.ref === taken.ref);
        }
      }
    });
  });

  it('records concurrent submissions, receipts and report attempts in shared statements, each with its own result', async () => {
    await withCountedStorage(async ({ storage, queries, schema }) => {
      const messages = Array.from({ length: 60 }, (_, i) =>
        buildNewMessage({ smsCount: (i % 3) + 1, callbackUrl: i % 2 === 0 ? 'https://client.example/dlr' : null }),
      );
      await storage.insertMessages(messages);
      const parts = messages.flatMap((m) => Array.from({ length: m.smsCount }, (_, index) => ({ ref: m.ref, index })));
      queries.count = 0;
      const submitted = await Promise.all(
        parts.map(({ ref, index }) => storage.recordSubmission(ref, index, `c-${ref}-${index}`, 10)),
      );
      // A read and a write per round, all calls together; the parts of one message write one
      // row, so a message of three parts takes three rounds (each write applies or not by its
      // version, and the losers read again): a few statements, not one per call. How the
      // rounds split over the batches in flight depends on when each answer arrives (17-20
      // statements on Node 20, 24 seen on Node 24), so the bound is a sixth of one read and
      // one write per call.
      expect(queries.count).toBeLessThan((parts.length * 2) / 6);
      // Exactly one call per message saw its last part arrive, whatever order they ran in.
      const moved = submitted.flatMap((r) => (r.kind === 'submitted' ? [r.transition.message.ref] : []));
      expect(moved.sort()).toEqual(messages.map((m) => m.ref).sort());
      expect(submitted.filter((r) => r.kind === 'part')).toHaveLength(parts.length - messages.length);

      queries.count = 0;
      const applied = await Promise.all(
        parts.map(({ ref, index }) =>
          storage.applyReceipt({ carrierIds: [`c-${ref}-${index}`], outcome: outcome('delivered', 'delivered_to_terminal'), now: 20 }),
        ),
      );
      // As the submissions: lookups and writes of many calls at once. The writes that end a
      // message also log its report, and statements that log wait for one another on the log's
      // head row, so the rounds split further (40-77 statements seen under load): the bound is
      // half of one read and one write per call.
      expect(queries.count).toBeLessThan(parts.length);
      const ended = applied.flatMap((r) => (r.kind === 'terminal' ? [r.transition] : []));
      expect(ended.map((t) => t.message.ref).sort()).toEqual(messages.map((m) => m.ref).sort());
      for (const transition of ended) {
        expect(transition.message.state).toBe('delivered');
        expect(transition.message.callback?.state ?? null).toBe(transition.message.callbackUrl === null ? null : 'pending');
      }
      // Each report has its own uid: as many pending reports as messages with a URL.
      const reports = await pool.query(
        `SELECT count(DISTINCT data::jsonb ->> ${PACKED.reportUid})::int AS n FROM "${schema}".ledger_messages WHERE report_due_at IS NOT NULL`,
      );
      expect(reports.rows[0]).toEqual({ n: messages.filter((m) => m.callbackUrl !== null).length });
      // A receipt again is a duplicate, in a batch as alone.
      const repeated = await Promise.all(
        parts.slice(0, 5).map(({ ref, index }) =>
          storage.applyReceipt({ carrierIds: ['unknown-spelling', `c-${ref}-${index}`], outcome: outcome('delivered', 'delivered_to_terminal'), now: 30 }),
        ),
      );
      expect(repeated.map((r) => r.kind)).toEqual(Array(5).fill('duplicate'));

      // The reports' attempts, too: each ends as its own result says.
      const due = await storage.claimCallbacks({ owner: 'o', limit: 100, leaseMs: 1_000, now: 40 });
      expect(due).toHaveLength(messages.filter((m) => m.callbackUrl !== null).length);
      queries.count = 0;
      await Promise.all(
        due.map(({ uid }, i) =>
          storage.recordCallbackAttempt(uid, {
            result: i % 3 === 0 ? 'delivered' : i % 3 === 1 ? 'retry' : 'failed',
            statusCode: i % 3 === 0 ? 200 : 503,
            error: null,
            nextAttemptAt: 1_000 + i,
            now: 50,
          }),
        ),
      );
      expect(queries.count).toBeLessThanOrEqual(3);
      for (const [i, { uid, message }] of due.entries()) {
        const stored = await storage.getMessage(message.principalId, message.ref);
        expect(stored?.callback).toMatchObject({
          state: i % 3 === 0 ? 'delivered' : i % 3 === 1 ? 'pending' : 'failed',
          attempts: 1,
          lastStatusCode: i % 3 === 0 ? 200 : 503,
          nextAttemptAt: i % 3 === 1 ? 1_000 + i : null,
        });
        expect(uid).toBeTruthy();
      }
    });
  });

  it('answers each call of a batch as the call alone would, in every case a step can meet', async () => {
    // The same messages in two schemas; one gets each step's calls at once (one batch, and
    // a second call on a message of the batch right after it), the other one call at a time.
    // Results and records must be the same.
    const delivered = outcome('delivered', 'delivered_to_terminal');
    const absent = outcome('undelivered', 'absent_subscriber');
    const url = 'https://client.example/dlr';
    const m = {
      single: buildNewMessage({ callbackUrl: url, createdAt: 1 }),
      noUrl: buildNewMessage({ createdAt: 1 }),
      twoParts: buildNewMessage({ smsCount: 2, callbackUrl: url, createdAt: 1 }),
      failedPart: buildNewMessage({ smsCount: 2, callbackUrl: url, createdAt: 1 }),
      ended: buildNewMessage({ callbackUrl: url, createdAt: 1 }),
      reported: buildNewMessage({ createdAt: 1 }),
      spelled: buildNewMessage({ createdAt: 1 }),
      outOfRange: buildNewMessage({ createdAt: 1 }),
      bothParts: buildNewMessage({ smsCount: 2, callbackUrl: url, createdAt: 1 }),
    };
    const prepare = async (storage: Storage): Promise<void> => {
      await storage.insertMessages(Object.values(m));
      for (const message of [m.failedPart, m.reported, m.spelled]) {
        for (let index = 0; index < message.smsCount; index++) {
          await storage.recordSubmission(message.ref, index, `${message.ref}-${index}`, 5);
        }
      }
      await storage.recordSubmission(m.twoParts.ref, 1, `${m.twoParts.ref}-1`, 5);
      await storage.applyReceipt({ carrierIds: [`${m.failedPart.ref}-0`], outcome: absent, now: 6 });
      await storage.applyReceipt({ carrierIds: [`${m.reported.ref}-0`], outcome: delivered, now: 6 });
      await storage.finish(m.ended.ref, outcome('failed', 'rejected'), 7);
    };
    const submissions: [string, number, string][] = [
      [m.single.ref, 0, 'id-single'],
      [m.noUrl.ref, 0, 'id-no-url'],
      [m.twoParts.ref, 0, 'id-two-parts-0'], // its last part: submitted
      [m.ended.ref, 0, 'id-ended'], // stale, yet indexed
      [m.outOfRange.ref, 3, 'id-out-of-range'], // stale: no such part
      ['no-such-ref', 0, 'id-nowhere'], // stale
      [m.bothParts.ref, 0, 'id-both-0'], // part
      [m.bothParts.ref, 1, 'id-both-1'], // the same message again: submitted
    ];
    const receipts: [string[], Outcome][] = [
      [['id-single'], delivered], // terminal, with a report
      [['id-no-url'], absent], // terminal, no report
      [['id-two-parts-0'], delivered], // part: part 1 still awaits its receipt
      [[`${m.failedPart.ref}-1`], delivered], // terminal with part 0's failure
      [['id-ended'], delivered], // late
      [[`${m.reported.ref}-0`], absent], // duplicate
      [['not-stored', `${m.spelled.ref}-0`], delivered], // the second spelling
      [['id-nowhere'], delivered], // unknown
      [['id-both-1'], absent], // part
      [['id-both-0'], delivered], // the same message again: terminal with part 1's failure
    ];
    const [batchedSchema, aloneSchema] = [freshSchema(), freshSchema()];
    const batched = new PostgresStorage({ pool, schema: batchedSchema });
    const alone = new PostgresStorage({ pool, schema: aloneSchema });
    try {
      await prepare(batched);
      await prepare(alone);
      // The last call names a message the batch names already: it follows the batch, since
      // which of two calls on one message at once goes first is a race the contract leaves open.
      const submit = ([ref, index, id]: [string, number, string]) => batched.recordSubmission(ref, index, id, 10);
      const batchedSubmissions = [...(await Promise.all(submissions.slice(0, -1).map(submit))), await submit(submissions.at(-1)!)];
      const aloneSubmissions = [];
      for (const [ref, index, id] of submissions) aloneSubmissions.push(await alone.recordSubmission(ref, index, id, 10));
      expect(batchedSubmissions.map((r) => r.kind)).toEqual(['submitted', 'submitted', 'submitted', 'stale', 'stale', 'stale', 'part', 'submitted']);
      expect(batchedSubmissions).toEqual(aloneSubmissions);

      // Reports leased as three receipts ask: one ending a message in the statement over the
      // batch, one ending a message without a URL, and one ending a message one by one.
      const leased = new Set([0, 1, 9]);
      const receipt = (i: number): PartReceipt => ({
        carrierIds: receipts[i]![0],
        outcome: receipts[i]![1],
        now: 20,
        ...(leased.has(i) ? { reportLease: { owner: 'this-instance', until: 60_020 } } : {}),
      });
      const last = receipts.length - 1;
      const batchedReceipts = [...(await Promise.all(receipts.slice(0, last).map((_, i) => batched.applyReceipt(receipt(i))))), await batched.applyReceipt(receipt(last))];
      const aloneReceipts = [];
      for (const i of receipts.keys()) aloneReceipts.push(await alone.applyReceipt(receipt(i)));
      expect(batchedReceipts.map((r) => r.kind)).toEqual([
        'terminal', 'terminal', 'part', 'terminal', 'late', 'duplicate', 'terminal', 'unknown', 'part', 'terminal',
      ]);
      // The same receipt again is a duplicate. (Two calls of one receipt at once are a race
      // the contract leaves open: either may be the one that ends the message.)
      for (const storage of [batched, alone]) {
        expect((await storage.applyReceipt({ carrierIds: ['id-single'], outcome: delivered, now: 21 })).kind).toBe('duplicate');
      }
      const leasedReports = (results: ReceiptResult[]) =>
        results.map((r) => (r.kind === 'terminal' ? (r.transition.leasedReport ?? null) : null));
      expect(leasedReports(batchedReceipts).map((report) => report?.until ?? null)).toEqual([
        60_020, null, null, null, null, null, null, null, null, 60_020,
      ]);
      // The uids are made per call, so they differ between the schemas; all else is the same.
      const withoutUids = (results: ReceiptResult[]) =>
        results.map((r) =>
          r.kind === 'terminal' && r.transition.leasedReport !== undefined
            ? { ...r, transition: { ...r.transition, leasedReport: { ...r.transition.leasedReport, uid: '' } } }
            : r,
        );
      expect(withoutUids(batchedReceipts)).toEqual(withoutUids(aloneReceipts));
      const leasedUids = await pool.query<{ uid: string }>(
        `SELECT data::jsonb ->> ${PACKED.reportUid} AS uid FROM "${batchedSchema}".ledger_messages WHERE report_due_at = 60020 ORDER BY ref`,
      );
      expect(leasedUids.rows.map((row) => row.uid).sort()).toEqual(
        leasedReports(batchedReceipts).flatMap((report) => (report === null ? [] : [report.uid])).sort(),
      );
      const failed = batchedReceipts[3]!;
      expect(failed.kind === 'terminal' && failed.transition.message).toMatchObject({ state: 'undelivered', statusReason: 'absent_subscriber' });

      for (const message of Object.values(m)) {
        const record = await batched.getMessage(message.principalId, message.ref);
        expect(record).toEqual(await alone.getMessage(message.principalId, message.ref));
      }
      const reports = async (schema: string): Promise<unknown[]> =>
        (
          await pool.query(
            `SELECT ref, data::jsonb -> ${PACKED.callback} ->> 'state' AS state, report_due_at FROM "${schema}".ledger_messages
              WHERE data::jsonb ->> ${PACKED.reportUid} IS NOT NULL ORDER BY ref`,
          )
        ).rows;
      expect(await reports(batchedSchema)).toEqual(await reports(aloneSchema));
      expect(await reports(batchedSchema)).toHaveLength(4);
    } finally {
      await dropSchema(batchedSchema);
      await dropSchema(aloneSchema);
    }
  });

  it('runs each per-message step in a read and a write at most, no transaction; a sweep in five', async () => {
    await withCountedStorage(async ({ storage, queries }) => {
      const delivered = outcome('delivered', 'delivered_to_terminal');
      const step = async <T>(work: () => Promise<T>, most = 2): Promise<T> => {
        queries.count = 0;
        const result = await work();
        expect(queries.count).toBeLessThanOrEqual(most);
        return result;
      };
      await storage.ready();
      const [two, one, overdue] = [
        buildNewMessage({ smsCount: 2, callbackUrl: 'https://client.example/dlr' }),
        buildNewMessage(),
        buildNewMessage(),
      ];
      await storage.insertMessages([two!, one!, overdue!]);
      expect((await step(() => storage.recordSubmission(two!.ref, 0, 'a0', 10))).kind).toBe('part');
      expect((await step(() => storage.recordSubmission(two!.ref, 1, 'a1', 11))).kind).toBe('submitted');
      const now = 20;
      expect((await step(() => storage.applyReceipt({ carrierIds: ['a0'], outcome: delivered, now }))).kind).toBe('part');
      const terminal = await step(() => storage.applyReceipt({ carrierIds: ['x', 'a1'], outcome: delivered, now }));
      expect(terminal.kind === 'terminal' && terminal.transition.message.callback?.state).toBe('pending');
      expect((await step(() => storage.finish(one!.ref, outcome('failed', 'unknown'), 30)))?.message.state).toBe('failed');
      await storage.recordSubmission(overdue!.ref, 0, 'o0', 40);
      // A sweep reads its due rows in a transaction that pins the index order (BEGIN, SET
      // LOCAL, SELECT, COMMIT), then writes them in one statement.
      const expired = await step(() => storage.expireOverdue(50, 10, outcome('expired', 'unknown'), 60), 5);
      expect(expired.map((transition) => transition.message.ref)).toEqual([overdue!.ref]);
    });
  });
});

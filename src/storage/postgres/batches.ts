/**
 * How the PostgreSQL storage's hot steps go out: concurrent calls of `insertMessages`,
 * `recordSubmission`, `applyReceipt` and `recordCallbackAttempt` are gathered by a
 * {@link Batcher} and sent as one statement, so under load they share one round trip and
 * one commit (each commit waits for its WAL flush) rather than paying for one each. Each
 * step has its two runners here: the call alone, and the calls of a batch together.
 *
 * @module
 */
import type { Pool } from 'pg';
import { Batcher, type BatcherOptions } from '../../util/batcher.js';
import { creditSql, insertCharged, type InsertOutcome, type Queryable } from './credit.js';
import { idempotencyParams, storedCalls, type TakenKeys } from './idempotency.js';
import { transaction } from './transaction.js';
import { hasTimes, timesParams } from './timed.js';
import { insertParams, toReceiptResult, toSubmissionResult, type InsertRows, type ReceiptJson, type SubmissionJson } from './rows.js';
import type { PostgresStatements } from './statements.js';
import type { CallbackAttempt, PartReceipt, ReceiptResult, SubmissionResult } from '../contract.js';

/** One `recordSubmission` call, as its batch carries it. */
export interface SubmissionCall {
  ref: string;
  index: number;
  carrierId: string;
  now: number;
}

/** One `applyReceipt` call, with the uid its report gets if it ends a message with a URL. */
export interface ReceiptCall {
  receipt: PartReceipt;
  uid: string;
}

/** One `recordCallbackAttempt` call, as its batch carries it. */
export interface AttemptCall {
  uid: string;
  attempt: CallbackAttempt;
}

/** The batched steps of one storage; `call` each with one call's item. */
export interface PostgresBatches {
  /**
   * Inserts each call's messages under its lease, if any, with its idempotency record and its
   * charge; resolves false for a call whose key was held by a live record, or the error for a
   * call its balance could not pay (nothing of either stored).
   */
  inserts: Batcher<InsertRows, InsertOutcome>;
  /** `record_submission`, or `record_submissions` for a batch. */
  submissions: Batcher<SubmissionCall, SubmissionResult>;
  /** `apply_receipt`, or `apply_receipts` for a batch. */
  receipts: Batcher<ReceiptCall, ReceiptResult>;
  /** Report attempts, one statement for any number of them. */
  attempts: Batcher<AttemptCall, void>;
}

/**
 * A {@link Batcher}'s two runners for a step with no per-call result, from one function that
 * writes any number of calls in one statement.
 */
function runAsOneStatement<I>(write: (calls: readonly I[]) => Promise<void>): Pick<BatcherOptions<I, void>, 'runOne' | 'runBatch'> {
  return {
    runOne: (call) => write([call]),
    runBatch: async (calls) => {
      await write(calls);
      return calls.map(() => undefined);
    },
  };
}

/** The batched steps over `pool`, running the statements `sql` (and `credit`, the ledger's in its schema). */
export function postgresBatches(pool: Pool, sql: PostgresStatements, credit: ReturnType<typeof creditSql>): PostgresBatches {
  /**
   * The insert itself: one statement for every message of every call given; the keyed one
   * only when a call has an idempotency record, so the others pay nothing for it. A call
   * refused for its key leaves a gap in its group's fair tags: its messages were counted.
   */
  const insert = async (calls: readonly InsertRows[], db: Queryable = pool): Promise<boolean[]> => {
    if (calls.every((call) => call.idempotency == null)) {
      await db.query(sql.insertMessages, insertParams(calls));
      return calls.map(() => true);
    }
    const { rows } = await db.query<TakenKeys>(sql.insertMessagesKeyed, [...insertParams(calls), ...idempotencyParams(calls)]);
    return storedCalls(calls, rows[0]!);
  };

  /** {@link insert}, then the times of the messages that have any (lifecycle/timing.ts), in one transaction. */
  const insertTimed = async (calls: readonly InsertRows[], db: Queryable = pool): Promise<boolean[]> => {
    if (!calls.some(hasTimes)) return insert(calls, db);
    if (db === pool) return transaction(pool, (client) => insertTimed(calls, client));
    const stored = await insert(calls, db);
    await db.query(sql.storeTimes, timesParams(calls.filter((_, i) => stored[i])));
    return stored;
  };

  /** {@link insertTimed}, in a transaction with the ledger's steps when a call carries a charge. */
  const insertPaid = async (calls: readonly InsertRows[]): Promise<InsertOutcome[]> =>
    calls.some((call) => call.credit != null) ? insertCharged(pool, credit, calls, insertTimed) : insertTimed(calls);

  const recordSubmission = async (call: SubmissionCall): Promise<SubmissionResult> => {
    const params = [call.ref, call.index, call.carrierId, call.now];
    const { rows } = await pool.query<{ result: SubmissionJson }>(sql.recordSubmission, params);
    return toSubmissionResult(call.ref, rows[0]!.result);
  };

  const recordSubmissions = async (calls: readonly SubmissionCall[]): Promise<SubmissionResult[]> => {
    const params = [calls.map((c) => c.ref), calls.map((c) => c.index), calls.map((c) => c.carrierId), calls.map((c) => c.now)];
    const { rows } = await pool.query<{ result: SubmissionJson[] }>(sql.recordSubmissions, params);
    return rows[0]!.result.map((result, i) => toSubmissionResult(calls[i]!.ref, result));
  };

  const applyReceipt = async ({ receipt, uid }: ReceiptCall): Promise<ReceiptResult> => {
    const { outcome } = receipt;
    const { rows } = await pool.query<{ result: ReceiptJson }>(sql.applyReceipt, [
      receipt.carrierIds,
      outcome.state,
      outcome.reason,
      outcome.description,
      receipt.now,
      uid,
      receipt.reportLease?.owner ?? null,
      receipt.reportLease?.until ?? null,
    ]);
    return toReceiptResult(rows[0]!.result);
  };

  const applyReceipts = async (calls: readonly ReceiptCall[]): Promise<ReceiptResult[]> => {
    const receipts = calls.map((call) => call.receipt);
    const { rows } = await pool.query<{ result: ReceiptJson[] }>(sql.applyReceipts, [
      JSON.stringify(receipts.map((r) => r.carrierIds)),
      receipts.map((r) => r.outcome.state),
      receipts.map((r) => r.outcome.reason),
      receipts.map((r) => r.outcome.description),
      receipts.map((r) => r.now),
      calls.map((call) => call.uid),
      receipts.map((r) => r.reportLease?.owner ?? null),
      receipts.map((r) => r.reportLease?.until ?? null),
    ]);
    return rows[0]!.result.map(toReceiptResult);
  };

  /** Records `calls` in one statement; a uid appears at most once in a batch (one attempt runs at a time). */
  const recordAttempts = async (calls: readonly AttemptCall[]): Promise<void> => {
    const retry = calls.map(({ attempt }) => attempt.result === 'retry');
    await pool.query(sql.recordCallbackAttempts, [
      calls.map((call) => call.uid),
      calls.map((call) => call.attempt.statusCode),
      calls.map((call) => call.attempt.error),
      calls.map((call, i) => (retry[i] ? 'pending' : call.attempt.result)),
      calls.map((call, i) => (retry[i] ? (call.attempt.nextAttemptAt ?? call.attempt.now) : null)),
    ]);
  };

  // Each batch is one statement (one transaction, one commit). A few out at once keep
  // PostgreSQL's other core busy while this process prepares the next; more would only
  // take connections from the host's pool.
  const batching = { maxBatch: 100, maxInFlight: 3 };
  return {
    inserts: new Batcher({ ...batching, runOne: async (call) => (await insertPaid([call]))[0]!, runBatch: insertPaid }),
    submissions: new Batcher({ ...batching, runOne: recordSubmission, runBatch: recordSubmissions }),
    receipts: new Batcher({ ...batching, runOne: applyReceipt, runBatch: applyReceipts }),
    attempts: new Batcher({ ...batching, ...runAsOneStatement(recordAttempts) }),
  };
}

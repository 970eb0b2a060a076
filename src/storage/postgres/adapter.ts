/**
 * The PostgreSQL storage, `PostgresStorage`: the class the host makes, holding the pool, the
 * batches of concurrent calls and the memoised migration. It only sequences the work; the
 * SQL it runs is in statements.ts and claims.ts, the stored functions in functions.ts, the
 * schema in migrations.ts and the row mapping in rows.ts, so each can be read (and changed)
 * without the others.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { TERMINAL_STATES } from '../../lifecycle/states.js';
import { PRIORITY_RANK } from '../../lifecycle/fair-tags.js';
import { postgresBatches, type PostgresBatches } from './batches.js';
import type { StoredFunction } from './function-parts.js';
import { storedFunctions } from './functions.js';
import { creditSql, type CreditSql } from './credit.js';
import { toIdempotencyRecord, type IdempotencyRow } from './idempotency.js';
import { PostgresInbound } from './inbound.js';
import { migrate } from './migrations.js';
import { CANCELLED, VALIDITY_ELAPSED } from '../../lifecycle/timing.js';
import { delegateInbound, type InboundStorage } from '../inbound-record.js';
import { functionNames, quoteIdent, schemaTables } from './names.js';
import { resolvePostgresOptions, type PostgresStorageOptions } from './options.js';
import { RECORD_SELECT, toRecord, toTransition, type RecordRow, type TransitionJson } from './rows.js';
import { postgresStatements, type PostgresStatements } from './statements.js';
import type {
  CancelResult,
  CallbackAttempt,
  ClaimOptions,
  CreditCharge,
  DueCallback,
  IdempotencyRecord,
  InsertLease,
  MessageRecord,
  NewMessage,
  Outcome,
  PartReceipt,
  QueueCount,
  ReceiptResult,
  Storage,
  SubmissionResult,
  Transition,
} from '../contract.js';

/** A row of the count (statements.ts `countQueued`): a class's rank, its count and oldest `created_at`. */
interface CountRow {
  priority: number;
  n: string;
  oldest: string;
}

/** One report uid for each of up to `count` messages a step may end. */
function uids(count: number): string[] {
  return Array.from({ length: Math.max(0, count) }, () => randomUUID());
}

/** The parameters of both claims (claims.ts): owner, lease end, now, limit. */
function claimParams(options: ClaimOptions): unknown[] {
  return [options.owner, options.now + options.leaseMs, options.now, options.limit];
}

/**
 * Storage in PostgreSQL, for many instances of the service behind a load balancer.
 *
 * Takes the host's `pg.Pool` and never ends it. Tables live in their own schema (default
 * `sms_outbox`), created and migrated on first use (or by {@link PostgresStorage.ready});
 * instances starting together apply each migration once. Claims use
 * `FOR UPDATE SKIP LOCKED` with leases, so two instances never claim the same due
 * message while its lease lives; receipts and endings lock the message row, so two
 * receipts for two parts folded on two instances still end the message once.
 * Times are stored as epoch milliseconds in `bigint` columns.
 *
 * Every method is one statement, so one round trip: the multi-statement steps
 * (`recordSubmission`, `applyReceipt`, `finish`, `expireOverdue`) are PL/pgSQL functions in
 * the schema (functions.ts), kept current by the migration. The hot ones (`insertMessages`,
 * `recordSubmission`, `applyReceipt`, `recordCallbackAttempt`) are also batched: calls made
 * while others are out go together in one statement, so under load they share commits
 * (batches.ts). A batch holds its messages' row locks until its commit; two batches that
 * deadlock are rolled back by PostgreSQL and their calls run one by one.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class PostgresStorage implements Storage {
  private readonly pool: Pool;
  private readonly schema: string;
  /** The SQL of every step, built once from the schema's names. */
  private readonly sql: PostgresStatements;
  private readonly functions: StoredFunction[];
  /** The credit ledger's SQL (credit.ts). */
  private readonly credit: CreditSql;
  private readying: Promise<void> | undefined;
  /** Concurrent calls of the hot steps, sent together (batches.ts). */
  private readonly batches: PostgresBatches;

  /** Throws a TypeError for a missing pool, a bad schema name or an unknown option. */
  constructor(options: PostgresStorageOptions) {
    const { pool, schema } = resolvePostgresOptions(options);
    this.pool = pool;
    this.schema = schema;
    const s = quoteIdent(schema);
    const t = schemaTables(s);
    this.sql = postgresStatements(t, functionNames(s));
    this.functions = storedFunctions(s, t, RECORD_SELECT);
    this.credit = creditSql(s);
    this.batches = postgresBatches(pool, this.sql, this.credit);
    delegateInbound(this, new PostgresInbound(pool, s, () => this.ready()));
  }

  /**
   * Creates the schema and applies pending migrations; memoised, so every call after the
   * first returns the same promise (a failed attempt is forgotten, so the next call retries).
   * The other methods call it themselves; call it at startup to fail early.
   */
  ready(): Promise<void> {
    if (this.readying === undefined) {
      this.readying = migrate(this.pool, this.schema, this.functions).catch((error: unknown) => {
        this.readying = undefined;
        throw error;
      });
    }
    return this.readying;
  }

  /** Waits for a migration in flight; the pool is the host's, so it stays open. */
  async close(): Promise<void> {
    await this.readying?.catch(() => undefined);
  }

  /**
   * Stores all messages and their parts, with the idempotency record if any, in one
   * statement: all or none. Requests stored at the same time share the statement (and its
   * commit); if it fails, each request is stored on its own, so one request's failure is not
   * another's. A key held by a live record (of this instance or another) stores nothing.
   */
  async insertMessages(messages: readonly NewMessage[], lease?: InsertLease, idempotency?: IdempotencyRecord, credit?: CreditCharge): Promise<void> {
    await this.ready();
    if (messages.length === 0) return;
    // Copied now: the caller may reuse its array before the batch goes out.
    const stored = await this.batches.inserts.call({
      messages: [...messages],
      owner: lease?.owner ?? null,
      until: lease?.until ?? null,
      idempotency: idempotency === undefined ? null : { ...idempotency },
      credit: credit === undefined ? null : { ...credit },
    });
    if (stored instanceof Error) throw stored;
    if (!stored) throw new Error(`PostgresStorage: idempotency key ${JSON.stringify(idempotency!.key)} is taken`);
  }

  /** Adds `units` to the principal's credit balance at `now`; resolves with the new balance. */
  async topUpCredit(principalId: string, units: number, now: number): Promise<number> {
    await this.ready();
    const { rows } = await this.pool.query<{ balance: string }>(this.credit.topUp, [principalId, units, now]);
    return Number(rows[0]!.balance);
  }

  /** The principal's credit balance, 0 when never topped up. */
  async creditBalance(principalId: string): Promise<number> {
    await this.ready();
    const { rows } = await this.pool.query<{ balance: string }>(this.credit.balance, [principalId]);
    return rows[0] === undefined ? 0 : Number(rows[0].balance);
  }

  /** The principal's live idempotency record under `key`, or `null`. */
  async findIdempotency(principalId: string, key: string, now: number): Promise<IdempotencyRecord | null> {
    await this.ready();
    const { rows } = await this.pool.query<IdempotencyRow>(this.sql.findIdempotency, [principalId, key, now]);
    return rows[0] === undefined ? null : toIdempotencyRecord(principalId, key, rows[0]);
  }

  /** Deletes up to `limit` idempotency records expired at `now`, oldest expiry first; instances sweeping at once skip each other's rows. */
  async purgeIdempotency(now: number, limit: number): Promise<number> {
    await this.ready();
    if (limit <= 0) return 0;
    const result = await this.pool.query(this.sql.purgeIdempotency, [now, limit]);
    return result.rowCount ?? 0;
  }

  /** Leases up to `limit` due, unleased `queued` messages, oldest first, with their parts (claims.ts). */
  async claimMessages(options: ClaimOptions): Promise<MessageRecord[]> {
    await this.ready();
    if (options.limit <= 0) return [];
    const { rows } = await this.pool.query<RecordRow>(this.sql.claimMessages, claimParams(options));
    return rows.map(toRecord);
  }

  /**
   * Records part `index`'s carrier id; the last part moves the message to `submitted`.
   * The transaction (lock the message, set the part's id, index the id, move the message)
   * runs in the stored function `record_submission`; calls made at the same time go out
   * together (`record_submissions`: one round trip and one commit for all of them).
   */
  async recordSubmission(ref: string, index: number, carrierId: string, now: number): Promise<SubmissionResult> {
    await this.ready();
    return this.batches.submissions.call({ ref, index, carrierId, now });
  }

  /** Gives a `queued` message back for another attempt at `nextAttemptAt`. */
  async reschedule(ref: string, nextAttemptAt: number, error: string, now: number): Promise<void> {
    await this.ready();
    await this.pool.query(this.sql.reschedule, [ref, error, nextAttemptAt, now]);
  }

  /**
   * Ends a message that is not yet terminal; `null` if it already is (or is unknown). One
   * round trip (the stored function `finish`); the report's uid is made here, used only
   * if the message has a callback URL.
   */
  async finish(ref: string, outcome: Outcome, now: number): Promise<Transition | null> {
    await this.ready();
    const params = [ref, outcome.state, outcome.reason, outcome.description, now, randomUUID()];
    const { rows } = await this.pool.query<{ result: TransitionJson | null }>(this.sql.finish, params);
    const result = rows[0]!.result;
    return result === null ? null : toTransition(result);
  }

  /** Queues the scheduled messages due at `now` at their fair tags then, or ends the stale ones (lifecycle/timing.ts). */
  async promoteScheduled(now: number, limit: number): Promise<Transition[]> {
    return this.timedStep(this.sql.promote, [now, Math.max(0, limit), VALIDITY_ELAPSED.reason, VALIDITY_ELAPSED.description, uids(limit)]);
  }

  /** Ends the queued messages whose validity ended by `now` and that no live lease holds (lifecycle/timing.ts). */
  async expireUnsent(now: number, limit: number): Promise<Transition[]> {
    return this.timedStep(this.sql.expire, [now, Math.max(0, limit), VALIDITY_ELAPSED.reason, VALIDITY_ELAPSED.description, uids(limit)]);
  }

  /** Cancels each of the principal's `refs` still scheduled, or queued with nothing submitted and no lease (lifecycle/timing.ts). */
  async cancelMessages(principalId: string, refs: readonly string[], now: number): Promise<CancelResult> {
    await this.ready();
    // Sorted: two cancels lock their messages in one order, so they cannot deadlock.
    const sorted = [...new Set(refs)].sort();
    const params = [principalId, sorted, now, CANCELLED.reason, CANCELLED.description, uids(sorted.length)];
    const { rows } = await this.pool.query<{ result: { cancelled: TransitionJson[]; notCancelled: CancelResult['notCancelled'] } }>(this.sql.cancel, params);
    return { cancelled: rows[0]!.result.cancelled.map(toTransition), notCancelled: rows[0]!.result.notCancelled };
  }

  /** Runs a time-aware function that answers with an array of transitions. */
  private async timedStep(sql: string, params: unknown[]): Promise<Transition[]> {
    await this.ready();
    const { rows } = await this.pool.query<{ result: TransitionJson[] }>(sql, params);
    return rows[0]!.result.map(toTransition);
  }

  /**
   * Ends `submitted` messages unchanged since before `before`, oldest first. Rows another
   * instance holds are skipped, so two instances never end the same message twice. One
   * round trip (the stored function `expire_overdue`), given one report uid per message it
   * may end.
   */
  async expireOverdue(before: number, limit: number, outcome: Outcome, now: number): Promise<Transition[]> {
    await this.ready();
    const count = Math.max(0, limit);
    const uids = Array.from({ length: count }, () => randomUUID());
    const params = [before, count, outcome.state, outcome.reason, outcome.description, now, uids];
    const { rows } = await this.pool.query<{ result: TransitionJson[] }>(this.sql.expireOverdue, params);
    return rows[0]!.result.map(toTransition);
  }

  /**
   * Applies a receipt to the first stored part one of its carrier-id spellings names. The
   * transaction (find the part, lock its message, set the part's outcome, fold the parts,
   * end the message) runs in the stored function `apply_receipt`; receipts applied at the
   * same time go out together (`apply_receipts`).
   */
  async applyReceipt(receipt: PartReceipt): Promise<ReceiptResult> {
    await this.ready();
    if (receipt.carrierIds.length === 0) return { kind: 'unknown' };
    // The report's uid is made here (used only if this receipt ends a message with a URL).
    return this.batches.receipts.call({ receipt, uid: randomUUID() });
  }

  /** The principal's message `ref`, or `null`. */
  async getMessage(principalId: string, ref: string): Promise<MessageRecord | null> {
    await this.ready();
    const { rows } = await this.pool.query<RecordRow>(this.sql.getMessage, [principalId, ref]);
    return rows[0] === undefined ? null : toRecord(rows[0]);
  }

  /** The principal's messages with `externalId`, newest first, at most `limit`. */
  async findByExternalId(principalId: string, externalId: string, limit: number): Promise<MessageRecord[]> {
    await this.ready();
    if (limit <= 0) return [];
    const { rows } = await this.pool.query<RecordRow>(this.sql.findByExternalId, [principalId, externalId, limit]);
    return rows.map(toRecord);
  }

  /** Leases up to `limit` due pending delivery reports, oldest due first (claims.ts). */
  async claimCallbacks(options: ClaimOptions): Promise<DueCallback[]> {
    await this.ready();
    if (options.limit <= 0) return [];
    const { rows } = await this.pool.query<RecordRow & { cb_uid: string }>(this.sql.claimCallbacks, claimParams(options));
    return rows.map((row) => ({ uid: row.cb_uid, attempts: row.cb_attempts ?? 0, message: toRecord(row) }));
  }

  /** Makes pending claimed reports claimable again at `until`. */
  async deferCallbacks(uids: readonly string[], until: number): Promise<void> {
    await this.ready();
    if (uids.length === 0) return;
    await this.pool.query(this.sql.deferCallbacks, [until, uids]);
  }

  /** Records one attempt of report `uid` and ends its lease; ignored once it is finished. */
  async recordCallbackAttempt(uid: string, attempt: CallbackAttempt): Promise<void> {
    await this.ready();
    // Batched like the message steps: one report is one attempt, so unbatched every report
    // would be a transaction of its own, waiting for its own WAL flush.
    await this.batches.attempts.call({ uid, attempt });
  }

  /**
   * The queued messages (leased and retrying ones included) by class, and the oldest one's
   * acceptance time, of everyone or of `principalId`: one statement, an index-only scan of
   * messages_principal_queued_idx (statements.ts `countQueued`). It reads every queued
   * entry (of the principal), so its cost grows with the backlog: 1,000,000 queued take
   * about 0.2-0.3 s (bench/claim-postgres.ts), a principal's 1,000 about 0.3 ms.
   */
  async countQueued(principalId?: string): Promise<QueueCount> {
    await this.ready();
    const { rows } =
      principalId === undefined
        ? await this.pool.query<CountRow>(this.sql.countQueued)
        : await this.pool.query<CountRow>(this.sql.countQueuedOf, [principalId]);
    const count: QueueCount = { transactional: 0, bulk: 0, oldestAcceptedAt: null };
    for (const row of rows) {
      // int8 values come back as strings; counts and times fit a double.
      const n = Number(row.n);
      if (row.priority === PRIORITY_RANK.transactional) count.transactional += n;
      else count.bulk += n;
      const oldest = Number(row.oldest);
      if (count.oldestAcceptedAt === null || oldest < count.oldestAcceptedAt) count.oldestAcceptedAt = oldest;
    }
    return count;
  }

  /** Deletes up to `limit` terminal messages changed before `before` without a pending report. */
  async purge(before: number, limit: number): Promise<number> {
    await this.ready();
    if (limit <= 0) return 0;
    const result = await this.pool.query(this.sql.purge, [TERMINAL_STATES, before, limit]);
    return result.rowCount ?? 0;
  }
}

// The inbound methods ({@link InboundStorage}, in inbound.ts) are set by the constructor
// (`delegateInbound`); this declares them on the class.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface PostgresStorage extends InboundStorage {}

/**
 * The SQLite storage, `SqliteStorage`: the class the host makes, holding the database, its
 * group commit and the memoised migration. It only sequences the work of each step; the
 * options are checked in options.ts, the schema is in migrations.ts, the SQL in
 * statements.ts and claims.ts, and the row mapping in rows.ts, so each can be read (and
 * changed) without the others.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { foldParts, isTerminal } from '../../lifecycle/states.js';
import type { Outcome } from '../../lifecycle/states.js';
import { PRIORITY_RANK } from '../../lifecycle/fair-tags.js';
import { storedPartsJson } from '../stored-parts.js';
import { claimDueCallbacks, claimDueMessages, fairPlaces, leaveQueue, retryLater } from './claims.js';
import { GroupCommit } from './group-commit.js';
import { purgeInChunks } from './in-chunks.js';
import type { CreditStorage } from '../credit-record.js';
import { prepareCredit, sqliteLedger, takeCharge, type CreditStatements } from './credit.js';
import { SqliteInbound } from './inbound.js';
import { delegateInbound, type InboundStorage } from '../inbound-record.js';
import { migrate } from './migrations.js';
import { sqliteTimed, storeTimes, type SqliteTimed } from './timed.js';
import { resolveSqliteOptions, type SqliteStorageOptions } from './options.js';
import { insertParams, loadRecord, messageRecord, partsOf, type MessageRow } from './rows.js';
import { prepareStatements, type Statements } from './statements.js';
import type {
  CallbackAttempt,
  CallbackState,
  ClaimOptions,
  CreditCharge,
  DueCallback,
  IdempotencyRecord,
  InsertLease,
  MessageRecord,
  NewMessage,
  PartReceipt,
  PartRecord,
  QueueCount,
  ReceiptResult,
  Storage,
  SubmissionResult,
  Transition,
} from '../contract.js';

/**
 * Storage in one SQLite file: durable across restarts and crashes, for one process.
 *
 * Opens `path` at construction (or takes the host's `database` handle) and creates its
 * tables on first use (`ready()`). Every write runs in a transaction of its own (a
 * savepoint), and the writes asked for in the same turn of the event loop share one
 * commit (see group-commit.ts), so a burst of requests and worker steps pays for
 * one disk sync rather than one each. Several processes may open the
 * same file (SQLite locks it), but claims are only as fast as one writer; for many
 * instances use `sms-outbox/postgres`.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class SqliteStorage implements Storage {
  private readonly db: Database.Database;
  private readonly ownsDatabase: boolean;
  private readonly synchronous: 'FULL' | 'NORMAL';
  private readonly busyTimeoutMs: number;
  private readyPromise: Promise<void> | undefined;
  private statements: Statements | undefined;
  private creditStatements: CreditStatements | undefined;
  private readonly commits: GroupCommit;
  private closed = false;

  /** Opens the file (or takes the handle); throws on a bad option. */
  constructor(options: SqliteStorageOptions) {
    const { db, ownsDatabase, synchronous, busyTimeoutMs } = resolveSqliteOptions(options);
    this.synchronous = synchronous;
    this.busyTimeoutMs = busyTimeoutMs;
    this.ownsDatabase = ownsDatabase;
    this.db = db;
    this.commits = new GroupCommit(this.db);
    Object.assign(this, sqliteLedger(async () => (await this.prepared(), this.creditStatements!), this.commits));
    delegateInbound(this, new SqliteInbound(async () => (await this.prepared(), this.db), this.commits));
    Object.assign(this, sqliteTimed(() => this.prepared(), this.commits, (s, row, ending, now) => this.terminate(s, row, ending, now, partsOf(row))));
  }

  /** Sets the pragmas and brings the schema up to date, once; later calls share the result. */
  ready(): Promise<void> {
    this.readyPromise ??= Promise.resolve()
      .then(() => this.migrate())
      .catch((error: unknown) => {
        // Let a later call try again (the file may have been locked) rather than fail forever.
        this.readyPromise = undefined;
        throw error;
      });
    return this.readyPromise;
  }

  /** Commits inserts still waiting for their group, then closes the file if it opened it. */
  async close(): Promise<void> {
    if (this.closed) return;
    // Inserts already waiting on ready() resume before this does (FIFO), so they join
    // the final flush instead of finding the storage closed.
    await this.readyPromise?.catch(() => undefined);
    if (this.closed) return;
    this.commits.flush();
    this.closed = true;
    if (this.ownsDatabase) this.db.close();
  }

  /**
   * Stores every message as `queued` (leased under `lease`) in its fair place (claims.ts), with
   * the idempotency record if any, or nothing (a taken key throws before any message is
   * written); shares a commit with concurrent calls.
   */
  async insertMessages(messages: readonly NewMessage[], lease?: InsertLease, idempotency?: IdempotencyRecord, credit?: CreditCharge): Promise<void> {
    const s = await this.prepared();
    if (messages.length === 0) return;
    // Copied now: the caller may reuse its objects before the group is written.
    const batch = messages.map((message) => ({ ...message }));
    const leased = lease === undefined ? undefined : { owner: lease.owner, until: lease.until };
    const k = idempotency === undefined ? undefined : { ...idempotency };
    const charge = credit === undefined ? undefined : { ...credit };
    await this.commits.run(() => {
      if (k !== undefined && s.takeIdempotencyKey.run(k.principalId, k.key, k.bodyHash, k.status, k.body, k.createdAt, k.expiresAt).changes === 0) {
        throw new Error(`SqliteStorage: idempotency key ${JSON.stringify(k.key)} is taken`);
      }
      if (charge !== undefined) takeCharge(this.creditStatements!, charge, batch, batch[0]!.createdAt);
      // In the write, not before it: the places depend on what is queued when it runs.
      const places = fairPlaces(s, batch);
      batch.forEach((m, i) => {
        const { rank, tag } = places[i]!;
        const id = Number(s.insertMessage.run(insertParams(m, rank, tag)).lastInsertRowid);
        // A scheduled message gets its queue row when due (lifecycle/timing.ts).
        if (!storeTimes(s, id, m)) return;
        s.enqueue.run(rank, tag, id, m.principalId, m.createdAt, leased?.owner ?? null, leased?.until ?? null, m.createdAt);
      });
    });
  }

  /**
   * The principal's live idempotency record under `key`, or `null`: without a promise once the
   * statements are prepared, since every keyed request looks its key up and a promise turn
   * per request is measurable.
   */
  findIdempotency(principalId: string, key: string, now: number): IdempotencyRecord | null | Promise<IdempotencyRecord | null> {
    const s = this.closed ? undefined : this.statements;
    if (s === undefined) return this.prepared().then(() => this.findIdempotency(principalId, key, now));
    const row = s.idempotencyRecord.get(principalId, key, now);
    if (row === undefined) return null;
    return { principalId, key, bodyHash: row.body_hash, status: row.status, body: row.body, createdAt: row.created_at, expiresAt: row.expires_at };
  }

  /** Deletes up to `limit` idempotency records expired at `now`, oldest expiry first, in small transactions (in-chunks.ts). */
  async purgeIdempotency(now: number, limit: number): Promise<number> {
    const s = await this.prepared();
    return purgeInChunks(limit, (n) => this.commits.run(() => s.purgeIdempotency.run(now, n).changes));
  }

  /** Leases up to `limit` due, unleased `queued` messages, in fair order (claims.ts). */
  async claimMessages(options: ClaimOptions): Promise<MessageRecord[]> {
    const s = await this.prepared();
    return this.commits.run(() => claimDueMessages(s, options));
  }

  /** Records a part's carrier id; moves the message to `submitted` with its last part. */
  async recordSubmission(ref: string, index: number, carrierId: string, now: number): Promise<SubmissionResult> {
    const s = await this.prepared();
    return this.commits.run((): SubmissionResult => {
      const row = s.messageByRef.get(ref);
      if (row === undefined) return { kind: 'stale', ref };
      // Changed here and written back whole: they tell whether this was the last part
      // and are the parts of the record returned.
      const parts = partsOf(row);
      const part = parts[index];
      if (part === undefined) return { kind: 'stale', ref };
      part.carrierId = carrierId;
      const partsJson = storedPartsJson(parts);
      // Indexed and kept whatever the state, so a receipt for a late submission is matched
      // (and reported `late`) rather than `unknown`.
      s.indexCarrierId.run(carrierId, row.id, index);
      if (row.state !== 'queued') {
        s.setParts.run(partsJson, row.id);
        return { kind: 'stale', ref };
      }
      if (parts.some((other) => other.carrierId === null)) {
        s.setPartsTouched.run(partsJson, now, row.id);
        return { kind: 'part', ref };
      }
      s.markSubmitted.run(partsJson, now, row.id);
      leaveQueue(s, row);
      // The record as it would read back: markSubmitted changed only the state, the parts
      // and the time (the queue row, not part of a record, went), and a queued message has no
      // report (see claims.ts).
      const message = messageRecord({ ...row, state: 'submitted', updated_at: now, parts: partsJson }, parts, null);
      return { kind: 'submitted', transition: { message, previousState: 'queued' } };
    });
  }

  /** Gives a `queued` message back for another attempt at `nextAttemptAt`. */
  async reschedule(ref: string, nextAttemptAt: number, error: string, now: number): Promise<void> {
    const s = await this.prepared();
    await this.commits.run(() => {
      const key = s.reschedule.get(error, nextAttemptAt, now, ref);
      // Its place (rank, tag) stays: once due, it is claimed before the messages behind it.
      if (key !== undefined) retryLater(s, key, nextAttemptAt, now);
    });
  }

  /** Ends a message that is not yet terminal; `null` if it already is (or is unknown). */
  async finish(ref: string, outcome: Outcome, now: number): Promise<Transition | null> {
    const s = await this.prepared();
    return this.commits.run((): Transition | null => {
      const row = s.messageByRef.get(ref);
      if (row === undefined || isTerminal(row.state)) return null;
      return this.terminate(s, row, outcome, now, partsOf(row));
    });
  }

  /** Ends `submitted` messages unchanged since before `before`, oldest first. */
  async expireOverdue(before: number, limit: number, outcome: Outcome, now: number): Promise<Transition[]> {
    const s = await this.prepared();
    return this.commits.run(() =>
      s.overdue.all(before, Math.max(0, limit)).map((row) => this.terminate(s, row, outcome, now, partsOf(row))),
    );
  }

  /** Applies a receipt to the first stored part one of its carrier-id spellings names. */
  async applyReceipt(receipt: PartReceipt): Promise<ReceiptResult> {
    const s = await this.prepared();
    return this.commits.run((): ReceiptResult => {
      let address: { message_id: number; idx: number } | undefined;
      for (const carrierId of receipt.carrierIds) {
        address = s.carrierIdAddress.get(carrierId);
        if (address !== undefined) break;
      }
      if (address === undefined) return { kind: 'unknown' };
      const row = s.messageById.get(address.message_id)!;
      // Changed here and written back whole: they are folded into the message's outcome
      // and are the parts of the record returned.
      const parts = partsOf(row);
      const part = parts[address.idx]!;
      if (part.outcome !== null) return { kind: 'duplicate', ref: row.ref };
      const { outcome } = receipt;
      // A copy with the fields stored, as the row reads back: not the caller's object.
      part.outcome = { state: outcome.state, reason: outcome.reason, description: outcome.description };
      if (isTerminal(row.state)) {
        s.setParts.run(storedPartsJson(parts), row.id);
        return { kind: 'late', ref: row.ref };
      }
      const folded = foldParts(parts.map((other) => other.outcome));
      if (folded === null) {
        s.setPartsTouched.run(storedPartsJson(parts), receipt.now, row.id);
        return { kind: 'part', ref: row.ref };
      }
      return { kind: 'terminal', ref: row.ref, transition: this.terminate(s, row, folded, receipt.now, parts, receipt.reportLease) };
    });
  }

  /** The principal's message `ref`, or `null`. */
  async getMessage(principalId: string, ref: string): Promise<MessageRecord | null> {
    const s = await this.prepared();
    return this.db.transaction(() => {
      const row = s.messageByRef.get(ref);
      return row === undefined || row.principal_id !== principalId ? null : loadRecord(s, row);
    })();
  }

  /** The principal's messages with `externalId`, newest first, at most `limit`. */
  async findByExternalId(principalId: string, externalId: string, limit: number): Promise<MessageRecord[]> {
    const s = await this.prepared();
    return this.db.transaction(() =>
      s.byExternalId.all(principalId, externalId, Math.max(0, limit)).map((row) => loadRecord(s, row)),
    )();
  }

  /** Leases up to `limit` due pending delivery reports, oldest due first (claims.ts). */
  async claimCallbacks(options: ClaimOptions): Promise<DueCallback[]> {
    const s = await this.prepared();
    return this.commits.run(() => claimDueCallbacks(s, options));
  }

  /** Makes pending claimed reports claimable again at `until`. */
  async deferCallbacks(uids: readonly string[], until: number): Promise<void> {
    const s = await this.prepared();
    await this.commits.run(() => {
      for (const uid of uids) s.deferCallback.run(until, uid);
    });
  }

  /** Records one attempt of report `uid` and ends its lease; ignored once it is finished. */
  async recordCallbackAttempt(uid: string, attempt: CallbackAttempt): Promise<void> {
    const s = await this.prepared();
    const retry = attempt.result === 'retry';
    await this.commits.run(() =>
      s.recordCallbackAttempt.run(
        retry ? 'pending' : attempt.result,
        attempt.statusCode,
        attempt.error,
        retry ? (attempt.nextAttemptAt ?? attempt.now) : null,
        uid,
      ),
    );
  }

  /**
   * The queued messages (leased and retrying ones included) by class, and the oldest one's
   * acceptance time, of everyone or of `principalId`: one read of `sms_queue` (statements.ts
   * `countQueued`). It reads every queued row (of the principal), so its cost grows with the
   * backlog, and the read is synchronous (it holds the event loop): 1,000,000 queued take
   * about 0.1-0.25 s, a principal's 1,000 about 0.2 ms (the backlog bounds read it at most
   * once a `refreshMs`, and less often when it is slow: http/backlog.ts).
   */
  async countQueued(principalId?: string): Promise<QueueCount> {
    const s = await this.prepared();
    const rows = principalId === undefined ? s.countQueued.all() : s.countQueuedOf.all(principalId);
    const count: QueueCount = { transactional: 0, bulk: 0, oldestAcceptedAt: null };
    for (const [rank, n, oldest] of rows) {
      if (rank === PRIORITY_RANK.transactional) count.transactional += n;
      else count.bulk += n;
      if (count.oldestAcceptedAt === null || oldest < count.oldestAcceptedAt) count.oldestAcceptedAt = oldest;
    }
    return count;
  }

  /** Deletes up to `limit` terminal messages changed before `before` without a pending report, in small transactions (in-chunks.ts). */
  async purge(before: number, limit: number): Promise<number> {
    const s = await this.prepared();
    return purgeInChunks(limit, (n) =>
      this.commits.run(() => {
        const ids = s.purgeable.all(before, n);
        for (const { id } of ids) {
          s.deleteCarrierIds.run(id);
          s.deleteCallback.run(id);
          s.deleteMessage.run(id);
        }
        return ids.length;
      }),
    );
  }

  private async prepared(): Promise<Statements> {
    await this.ready();
    if (this.closed) throw new Error('SqliteStorage: closed');
    return this.statements!;
  }

  private migrate(): void {
    migrate(this.db, this.synchronous, this.busyTimeoutMs);
    this.statements = prepareStatements(this.db);
    this.creditStatements = prepareCredit(this.db);
  }

  /**
   * Moves a non-terminal message (`row`, with its current `parts`) to `outcome`, creating
   * its pending report with it (leased under `lease` if given). The record returned is
   * built from what was just written, exactly as it would read back, rather than read again.
   */
  private terminate(
    s: Statements,
    row: MessageRow,
    outcome: Outcome,
    now: number,
    parts: PartRecord[],
    lease?: InsertLease,
  ): Transition {
    const partsJson = storedPartsJson(parts);
    s.terminate.run(outcome.state, outcome.reason, outcome.description, partsJson, now, row.id);
    if (row.state === 'queued') leaveQueue(s, row);
    // A non-terminal message has no report yet (one is made only here), so the message's
    // report after this step is the one inserted now, or none.
    let callback: CallbackState | null = null;
    let leasedReport: Transition['leasedReport'];
    if (row.callback_url !== null) {
      const uid = randomUUID();
      s.insertCallback.run(uid, row.id, now, lease?.owner ?? null, lease?.until ?? null);
      callback = { state: 'pending', attempts: 0, lastStatusCode: null, lastError: null, nextAttemptAt: now };
      if (lease !== undefined) leasedReport = { uid, until: lease.until };
    }
    const updated: MessageRow = {
      ...row,
      state: outcome.state,
      status_reason: outcome.reason,
      status_description: outcome.description,
      updated_at: now,
      parts: partsJson,
    };
    const transition: Transition = { message: messageRecord(updated, parts, callback), previousState: row.state };
    if (leasedReport !== undefined) transition.leasedReport = leasedReport;
    return transition;
  }
}

// The inbound methods ({@link InboundStorage}, in inbound.ts) are set by the constructor
// (`delegateInbound`); this declares them on the class.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface SqliteStorage extends InboundStorage, Required<CreditStorage>, SqliteTimed {}

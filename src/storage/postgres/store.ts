/**
 * `PostgresRecordStore`: the shared SQL record store on PostgreSQL, with the two steps
 * PostgreSQL does in fewer round trips than the shared statements (statements.ts): the
 * compare-and-set writes of one event-loop turn go out together as one statement (with
 * their carrier ids and refunds), and a guarded insert is one statement rather than a
 * transaction. Its schema's creation also makes the inbound tables and moves the messages
 * of the earlier adapter's tables into the store's (upgrade.ts).
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import type { ClaimOptions } from '../claim-options.js';
import type { InsertCounted, InsertGuard, InsertRefusal, MessageRow, MessageWrite, Timer } from '../record-store.js';
import { Batcher } from '../../util/batcher.js';
import { fromColumns, num, numOrNull } from '../sql/rows.js';
import type { SqlSession } from '../sql/dialect.js';
import { dueMessages } from '../sql/queue.js';
import { createSchema } from '../sql/schema.js';
import { SqlRecordStore } from '../sql/store.js';
import { postgresClient } from './client.js';
import { PostgresInbound } from './inbound.js';
import { postgresDialect, quoteIdent } from './dialect.js';
import { insertCountedParams, insertParams, postgresStatements, writeParams } from './statements.js';
import { createInboundTables, postgresInboundTables, upgradeEarlierTables } from './upgrade.js';

/** The start of the store's table names in its schema, beside the earlier adapter's (`messages`...) and the inbound ones. */
export const TABLE_PREFIX = 'ledger_';

/** Writes per statement: a statement of 100 rows is a few hundred kB of parameters at most. */
const MAX_BATCH = 100;

/**
 * A few batches out at once keep PostgreSQL's other core busy while this process prepares
 * the next; more would only take connections from the host's pool.
 */
const MAX_IN_FLIGHT = 3;

/**
 * The shared schema's indexes of the submit queue, the reports and the timers, replaced by
 * partial ones over the rows they serve (every statement that reads one names a value of
 * its first column, so PostgreSQL knows the rows it wants are in it). A row out of the
 * queue, with no report pending or no timer, then costs no entry in them: an insert writes
 * five index entries rather than eight, and a write that takes a message out of the queue
 * (its every column version a new entry per index, as a non-HOT update) fewer still.
 */
function partialIndexes(messages: string): string[] {
  const partial = [
    ['messages_claim', 'queue, order_key, seq', 'queue IS NOT NULL'],
    ['messages_principal_queue', 'queue, principal_id, order_key', 'queue IS NOT NULL'],
    ['messages_accepted', 'queue, accepted_at', 'queue IS NOT NULL'],
    ['messages_report', 'report_due_at, order_key, seq', 'report_due_at IS NOT NULL'],
    ['messages_timer', 'timer, timer_at, seq', 'timer IS NOT NULL'],
    ['messages_carrier', 'carrier_id', 'carrier_id IS NOT NULL'],
  ];
  return partial.flatMap(([name, columns, where]) => [
    `CREATE INDEX IF NOT EXISTS ${quoteIdent(`${TABLE_PREFIX}${name}_partial`)} ON ${messages} (${columns}) WHERE ${where}`,
    `DROP INDEX IF EXISTS ${messages.slice(0, messages.indexOf('.'))}.${quoteIdent(`${TABLE_PREFIX}${name}`)}`,
  ]);
}

/** What one `queueEnds` asks. */
interface EndsAsked {
  queue: number;
  principalId: string;
  now: number;
}

/** What `queueEnds` answers. */
interface QueueEnds {
  principalLast: number | null;
  head: number | null;
}

/** The record store in schema `schema` of the host's pool, with the inbound rows (inbound.ts) in the schema's inbound tables. */
export class PostgresRecordStore extends SqlRecordStore {
  /** See {@link RecordStore.inbound}. */
  readonly inbound: PostgresInbound;
  readonly #pool: Pool;
  readonly #schema: string;
  readonly #sql: ReturnType<typeof postgresStatements>;
  readonly #writes: Batcher<MessageWrite, boolean>;
  readonly #ends: Batcher<EndsAsked, QueueEnds>;
  readonly #byRef: Batcher<string, MessageRow | null>;
  readonly #byCarrier: Batcher<readonly string[], MessageRow | null>;
  readonly #inserts: Batcher<readonly MessageRow[], void>;
  /** Names the prepared statements of this schema (a statement's name is per connection, and a pool may serve two schemas). */
  readonly #tag: string;

  /** A store on `pool`, its tables in `schema` (a plain identifier, checked by the options). */
  constructor(pool: Pool, schema: string) {
    // The store is not `this` before `super()`: the client reaches its `ready()` through it.
    const store: { self?: PostgresRecordStore } = {};
    super(postgresClient(pool, schema, () => store.self!.ready()), postgresDialect(schema), TABLE_PREFIX);
    store.self = this;
    this.#pool = pool;
    this.#schema = schema;
    this.#sql = postgresStatements(this.sql.tables);
    this.#tag = createHash('sha1').update(schema).digest('hex').slice(0, 16);
    const batching = { maxBatch: MAX_BATCH, maxInFlight: MAX_IN_FLIGHT };
    this.#writes = new Batcher({ ...batching, keyOf: (write) => write.row.record.ref, runBatch: (writes) => this.#writeAll(writes) });
    this.#ends = new Batcher({ ...batching, runBatch: (asked) => this.#endsOf(asked) });
    this.#byRef = new Batcher({ ...batching, runBatch: (refs) => this.#rowsOf(refs) });
    this.#byCarrier = new Batcher({ ...batching, runBatch: (lookups) => this.#rowsByCarrierId(lookups) });
    const insertAll = async (batches: readonly (readonly MessageRow[])[]): Promise<void[]> => {
      await this.#query('insert', insertParams(batches.flat(), undefined));
      return batches.map(() => undefined);
    };
    // Requests of 100 messages: 20 of them are 2,000 rows, a statement of a few MB at most.
    this.#inserts = new Batcher({ maxBatch: 20, maxInFlight: MAX_IN_FLIGHT, runBatch: insertAll });
    this.inbound = new PostgresInbound(pool, this.sql.client, this.sql.dialect, postgresInboundTables(quoteIdent(schema)), () => this.ready());
  }

  /**
   * Creates the schema (`SqlClient.exclusive`), the store's tables and the inbound ones, and
   * moves the messages of the earlier adapter's tables into the store's: one transaction
   * under the schema's advisory lock. The pool is the host's, so `close()` leaves it open.
   */
  protected override async createTables(session: SqlSession): Promise<void> {
    await createInboundTables(session, quoteIdent(this.#schema));
    // The shared creation, naming indexes without their schema.
    await createSchema(session, postgresDialect(this.#schema, false), TABLE_PREFIX, this.sql.tables);
    for (const statement of partialIndexes(this.sql.tables.messages)) await session.run(statement);
    await upgradeEarlierTables(session, quoteIdent(this.#schema), this.sql.tables);
  }

  /**
   * `RecordStore.insertMessages`: one statement, unless its guard both keys and charges, or
   * counts with more than its counter alone (a transaction then: one statement cannot undo
   * what it added when a later part of it refuses). Inserts without a guard made in one turn share their statement: it
   * stores all of them or none, and when it fails each is sent again alone, so a duplicate
   * ref fails only its own insert.
   */
  override async insertMessages(rows: readonly MessageRow[], guard?: InsertGuard): Promise<InsertRefusal | InsertCounted | undefined> {
    if (guard === undefined) {
      if (rows.length > 0) await this.#inserts.call(rows);
      return undefined;
    }
    const counters = guard.counters ?? [];
    if (counters.length === 1 && guard.idempotency === undefined && (guard.credit === undefined || guard.credit.units <= 0)) {
      const { rows: answer } = await this.#query('insertCounted', insertCountedParams(rows, counters[0]!));
      const counted = answer[0]!.counted;
      return counted === null || counted === undefined ? { refused: 'limit-reached', counter: 0 } : { counted: [num(counted)] };
    }
    if (counters.length > 0) return super.insertMessages(rows, guard);
    if (guard.idempotency !== undefined && guard.credit !== undefined && guard.credit.units > 0) return super.insertMessages(rows, guard);
    const { rows: answer } = await this.#query('insert', insertParams(rows, guard));
    const { key_free: keyFree, stored, balance } = answer[0] as { key_free: boolean; stored: boolean; balance: unknown };
    if (stored) return undefined;
    if (!keyFree) return { refused: 'key-taken' };
    return { refused: 'insufficient-credit', balance: balance === null ? 0 : num(balance) };
  }

  /**
   * `RecordStore.dueMessages`, read in the timer index's order whatever the statistics say:
   * in a schema not yet analyzed the planner believes few rows wait for a timer and reads
   * and sorts every one of them (a carrier that stops sending receipts leaves them all
   * waiting). A sweep runs about once a second, so its transaction's round trips are cheap.
   */
  override dueMessages(timer: Timer, at: number, limit: number): Promise<MessageRow[]> {
    if (limit <= 0) return Promise.resolve([]);
    return this.sql.client.transaction(async (tx) => {
      await tx.run('SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = off');
      return dueMessages(this.sql, timer, at, limit, tx);
    });
  }

  /** `RecordStore.getMessage`: the reads of one turn go out as one statement. */
  override getMessage(ref: string): Promise<MessageRow | null> {
    return this.#byRef.call(ref);
  }

  /** `RecordStore.findByCarrierId`: the lookups of one turn (each receipt's) go out as one statement. */
  override findByCarrierId(carrierIds: readonly string[]): Promise<MessageRow | null> {
    return carrierIds.length === 0 ? Promise.resolve(null) : this.#byCarrier.call(carrierIds);
  }

  /** The row of each of `refs`, or `null`, in one statement. */
  async #rowsOf(refs: readonly string[]): Promise<(MessageRow | null)[]> {
    const { rows } = await this.#query('rowsOf', [refs]);
    const byRef = new Map(rows.map(fromColumns).map((row) => [row.record.ref, row]));
    return refs.map((ref) => byRef.get(ref) ?? null);
  }

  /** The row each lookup of `lookups` finds, or `null`, in one statement. */
  async #rowsByCarrierId(lookups: readonly (readonly string[])[]): Promise<(MessageRow | null)[]> {
    const spellings = lookups.flatMap((ids, lookup) => ids.map((id, spelling) => [lookup, spelling, id] as const));
    const { rows } = await this.#query('rowsByCarrierId', [spellings.map((s) => s[0]), spellings.map((s) => s[1]), spellings.map((s) => s[2])]);
    const found = new Map(rows.map((row) => [num(row.lookup), fromColumns(row)]));
    return lookups.map((_, lookup) => found.get(lookup) ?? null);
  }

  /** `RecordStore.queueEnds`: the reads of one turn go out as one statement. */
  override queueEnds(queue: number, principalId: string, now: number): Promise<QueueEnds> {
    return this.#ends.call({ queue, principalId, now });
  }

  /** The ends of each of `asked`, in one statement. */
  async #endsOf(asked: readonly EndsAsked[]): Promise<QueueEnds[]> {
    const { rows } = await this.#query('queueEnds', [asked.map((a) => a.queue), asked.map((a) => a.principalId), asked.map((a) => a.now)]);
    return rows.map((row) => ({ principalLast: numOrNull(row.principal_last), head: numOrNull(row.head) ?? numOrNull(row.last) }));
  }

  /** `RecordStore.claimMessages`: one statement rather than a transaction of two; the rows in the queue's order. */
  override async claimMessages({ owner, limit, leaseMs, now }: ClaimOptions): Promise<MessageRow[]> {
    if (limit <= 0) return [];
    const { rows } = await this.#query('claimMessages', [owner, now + leaseMs, now, limit]);
    return rows.map(fromColumns).sort((a, b) => a.queue! - b.queue! || a.orderKey - b.orderKey || a.seq - b.seq);
  }

  /** `RecordStore.claimReports`: one statement; the rows in the order they were due. */
  override async claimReports({ limit, leaseMs, now }: ClaimOptions): Promise<MessageRow[]> {
    if (limit <= 0) return [];
    const { rows } = await this.#query('claimReports', [now + leaseMs, now, limit]);
    const due = new Map(rows.map((row) => [num(row.seq), num(row.was_due)]));
    return rows.map(fromColumns).sort((a, b) => due.get(a.seq)! - due.get(b.seq)! || a.orderKey - b.orderKey || a.seq - b.seq);
  }

  /** Runs statement `name` of statements.ts, prepared once per connection under a name of this schema. */
  async #query(name: keyof ReturnType<typeof postgresStatements>, values: unknown[]): Promise<{ rows: Record<string, unknown>[] }> {
    await this.ready();
    return this.#pool.query({ name: `sms_outbox_${name}_${this.#tag}`, text: this.#sql[name], values });
  }

  /**
   * `RecordStore.writeMessages`: each write joins the batch of this turn's writes, unless a
   * write of its row is in it already (each still applied or not on its own, by its version).
   */
  override writeMessages(writes: readonly MessageWrite[]): Promise<boolean[]> {
    // Most calls are one write: its answer without Promise.all's.
    if (writes.length === 1) return this.#writes.call(writes[0]!).then((applied) => [applied]);
    return Promise.all(writes.map((write) => this.#writes.call(write)));
  }

  /** One statement of `writes` (distinct refs); resolves with whether each applied. */
  async #writeAll(writes: readonly MessageWrite[]): Promise<boolean[]> {
    const { rows } = await this.#query('write', writeParams(writes));
    const refs = rows[0]!.refs as string | string[] | null;
    // The driver parses JSON unless the host's pool was told to leave it as text.
    const applied = new Set(typeof refs === 'string' ? (JSON.parse(refs) as string[]) : (refs ?? []));
    return writes.map((write) => applied.has(write.row.record.ref));
  }
}

/**
 * `PostgresRecordStore`: the shared SQL record store on PostgreSQL, with the two steps
 * PostgreSQL does in fewer round trips than the shared statements (statements.ts): the
 * compare-and-set writes of one event-loop turn go out together as one statement (with
 * their carrier ids and refunds), and a guarded insert is one statement rather than a
 * transaction. Its `ready()` also creates the inbound tables and moves the messages of the
 * earlier adapter's tables into the store's (upgrade.ts).
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import { delegateInbound, type InboundStorage } from '../inbound-record.js';
import type { InsertGuard, InsertRefusal, MessageRow, MessageWrite } from '../record-store.js';
import { num } from '../sql/rows.js';
import { createSchema } from '../sql/schema.js';
import { SqlRecordStore } from '../sql/store.js';
import { postgresClient } from './client.js';
import { postgresDialect, quoteIdent } from './dialect.js';
import { createInboundTables, PostgresInbound } from './inbound.js';
import { insertParams, postgresStatements, writeParams } from './statements.js';
import { upgradeEarlierTables } from './upgrade.js';
import { WriteBatches } from './write-batch.js';

/** The start of the store's table names in its schema, beside the earlier adapter's (`messages`...) and the inbound ones. */
export const TABLE_PREFIX = 'ledger_';

/** Writes per statement: a statement of 100 rows is a few hundred kB of parameters at most. */
const MAX_BATCH = 100;

/**
 * A few batches out at once keep PostgreSQL's other core busy while this process prepares
 * the next; more would only take connections from the host's pool.
 */
const MAX_IN_FLIGHT = 3;

/** The record store in schema `schema` of the host's pool, with the inbound steps (inbound.ts). */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class PostgresRecordStore extends SqlRecordStore {
  readonly #pool: Pool;
  readonly #schema: string;
  readonly #sql: ReturnType<typeof postgresStatements>;
  readonly #writes: WriteBatches;
  /** The prepared statements' names: per schema, short of PostgreSQL's 63 characters. */
  readonly #names: { insert: string; write: string };
  #readying: Promise<void> | undefined;

  /** A store on `pool`, its tables in `schema` (a plain identifier, checked by the options). */
  constructor(pool: Pool, schema: string) {
    // The store is not `this` before `super()`: the client reaches its `ready()` through it.
    const store: { self?: PostgresRecordStore } = {};
    super(postgresClient(pool, schema, () => store.self!.ready()), postgresDialect(schema), TABLE_PREFIX);
    store.self = this;
    this.#pool = pool;
    this.#schema = schema;
    this.#sql = postgresStatements(this.sql.tables);
    const tag = createHash('sha1').update(schema).digest('hex').slice(0, 16);
    this.#names = { insert: `sms_outbox_insert_${tag}`, write: `sms_outbox_write_${tag}` };
    this.#writes = new WriteBatches((writes) => this.#writeAll(writes), MAX_BATCH, MAX_IN_FLIGHT);
    delegateInbound(this, new PostgresInbound(pool, quoteIdent(schema), () => this.ready()));
  }

  /**
   * Creates the schema, the store's tables and the inbound ones, and moves the messages of
   * the earlier adapter's tables into the store's: one transaction under the schema's
   * advisory lock, so instances starting together do it once. Memoised; a failure is tried
   * again at the next call.
   */
  override ready(): Promise<void> {
    this.#readying ??= this.sql.client
      .exclusive('schema', async (session) => {
        await createInboundTables(session, quoteIdent(this.#schema));
        // The shared creation, on this transaction, naming indexes without their schema.
        const here = { ...this.sql.client, run: session.run.bind(session), exclusive: <T>(_: string, work: (s: typeof session) => Promise<T>) => work(session) };
        await createSchema(here, postgresDialect(this.#schema, false), TABLE_PREFIX, this.sql.tables);
        await upgradeEarlierTables(session, quoteIdent(this.#schema), this.sql.tables);
      })
      .catch((error: unknown) => {
        this.#readying = undefined;
        throw error;
      });
    return this.#readying;
  }

  /** Waits for a schema change in flight; the pool is the host's, so it stays open. */
  async close(): Promise<void> {
    await this.#readying?.catch(() => undefined);
  }

  /** `RecordStore.insertMessages`: one statement, unless its guard both keys and charges. */
  override async insertMessages(rows: readonly MessageRow[], guard?: InsertGuard): Promise<InsertRefusal | undefined> {
    if (rows.length === 0 && guard === undefined) return undefined;
    if (guard?.idempotency !== undefined && guard.credit !== undefined && guard.credit.units > 0) return super.insertMessages(rows, guard);
    await this.ready();
    const { rows: answer } = await this.#pool.query({ name: this.#names.insert, text: this.#sql.insert, values: insertParams(rows, guard) });
    const { key_free: keyFree, stored, balance } = answer[0] as { key_free: boolean; stored: boolean; balance: unknown };
    if (stored) return undefined;
    if (!keyFree) return { refused: 'key-taken' };
    return { refused: 'insufficient-credit', balance: balance === null ? 0 : num(balance) };
  }

  /** `RecordStore.writeMessages`: each write joins the batch of this turn's writes (each still applied or not on its own). */
  override writeMessages(writes: readonly MessageWrite[]): Promise<boolean[]> {
    return Promise.all(writes.map((write) => this.#writes.write(write)));
  }

  /** One statement of `writes` (distinct refs); resolves with the refs applied. */
  async #writeAll(writes: readonly MessageWrite[]): Promise<Set<string>> {
    await this.ready();
    const { rows } = await this.#pool.query<{ ref: string }>({ name: this.#names.write, text: this.#sql.write, values: writeParams(writes) });
    return new Set(rows.map((row) => row.ref));
  }
}

// The inbound methods are set by the constructor (`delegateInbound`); this declares them.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface PostgresRecordStore extends InboundStorage {}

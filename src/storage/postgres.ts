/**
 * The PostgreSQL storage: one schema shared by every instance of the service, with work
 * handed out by `FOR UPDATE SKIP LOCKED` claims and leases.
 */
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { TERMINAL_STATES } from '../lifecycle/states.js';
import { Batcher, type BatcherOptions } from '../util/batcher.js';
import { assertKnownKeys } from '../util/known-keys.js';
import { functionNames, storedFunctions, type FunctionNames, type StoredFunction } from './postgres-functions.js';
import { partsFromStored, unsubmittedPartsJson, type StoredPart } from './stored-parts.js';
import type {
  CallbackAttempt,
  CallbackState,
  ClaimOptions,
  DueCallback,
  InsertLease,
  Encoding,
  LeasedReport,
  Endpoint,
  MessageRecord,
  MessageState,
  NewMessage,
  Outcome,
  PartReceipt,
  ReceiptResult,
  RecipientField,
  ReferenceField,
  StatusReason,
  Storage,
  SubmissionResult,
  Transition,
} from './contract.js';

/** Options of {@link PostgresStorage}. */
export interface PostgresStorageOptions {
  /**
   * The host's pool (`new pg.Pool(...)`). The storage borrows clients from it and never
   * ends it, so the host may share it with its own queries and must end it itself.
   */
  pool: Pool;
  /**
   * The schema holding the tables, created if missing. Default `sms_outbox`. Letters,
   * digits and `_`, not starting with a digit, at most 63 characters; every instance of
   * one deployment must name the same schema.
   */
  schema?: string;
}

const KNOWN_OPTIONS = ['pool', 'schema'] as const;
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** First key of the two-key advisory lock the migrations take: "SMSO" in ASCII. */
const LOCK_NAMESPACE = 0x534d534f;

/**
 * "The report is still pending", for statements that name their reports by uid. Written as
 * not delivered and not failed rather than `state = 'pending'`, which the planner matched
 * to the pending reports' partial index: believing few reports pending (the statistics of a
 * new table), it read every pending report for each statement rather than probing the
 * primary key for the uids, 11 ms for a batch of 64 attempts with 20,000 reports pending
 * against 1.6 ms by the uids.
 */
const UNFINISHED_REPORT = "state NOT IN ('delivered', 'failed')";

/** Quotes an identifier for SQL (the name is also validated, so this is belt and braces). */
function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** FNV-1a of the schema name as a signed 32-bit int: the advisory lock's second key. */
function lockKey(schema: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < schema.length; i++) {
    hash ^= schema.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

/**
 * The schema's migrations, in order. Each one is applied once per schema, in one
 * transaction with the row that records it, so a crash mid-way leaves nothing half-made.
 * Append new versions; never edit a released one. `s` is the quoted schema name. Exported
 * for the tests that build a schema as an earlier version left it.
 */
export function migrations(s: string): { version: number; statements: string[] }[] {
  return [
    {
      version: 1,
      statements: [
        `CREATE TABLE ${s}.messages (
          seq bigint GENERATED ALWAYS AS IDENTITY,
          ref text PRIMARY KEY,
          principal_id text NOT NULL,
          endpoint text NOT NULL,
          profile_code text NOT NULL,
          sender text NOT NULL,
          recipient text NOT NULL,
          text text NOT NULL,
          message_type integer NOT NULL,
          req_type integer NOT NULL,
          external_id text NOT NULL,
          recipient_field text NOT NULL,
          reference_field text NOT NULL,
          sms_count integer NOT NULL,
          encoding text NOT NULL,
          callback_url text,
          callback_secret text,
          created_at bigint NOT NULL,
          state text NOT NULL,
          status_reason text,
          status_description text,
          attempts integer NOT NULL DEFAULT 0,
          last_error text,
          next_attempt_at bigint NOT NULL,
          lease_owner text,
          lease_until bigint,
          updated_at bigint NOT NULL
        )`,
        // Claims scan only queued messages, oldest first.
        `CREATE INDEX messages_queued_idx ON ${s}.messages (created_at, seq) WHERE state = 'queued'`,
        `CREATE INDEX messages_external_id_idx ON ${s}.messages (principal_id, external_id, created_at DESC, seq DESC)`,
        `CREATE INDEX messages_purge_idx ON ${s}.messages (updated_at, seq) WHERE state NOT IN ('queued', 'submitted')`,
        `CREATE TABLE ${s}.parts (
          ref text NOT NULL REFERENCES ${s}.messages (ref) ON DELETE CASCADE,
          idx integer NOT NULL,
          carrier_id text,
          outcome_state text,
          outcome_reason text,
          outcome_description text,
          PRIMARY KEY (ref, idx)
        )`,
        // Every carrier id a part was ever given; a reused id points at its latest part.
        `CREATE TABLE ${s}.carrier_ids (
          carrier_id text PRIMARY KEY,
          ref text NOT NULL,
          idx integer NOT NULL,
          FOREIGN KEY (ref, idx) REFERENCES ${s}.parts (ref, idx) ON DELETE CASCADE
        )`,
        `CREATE INDEX carrier_ids_part_idx ON ${s}.carrier_ids (ref, idx)`,
        `CREATE TABLE ${s}.callbacks (
          seq bigint GENERATED ALWAYS AS IDENTITY,
          uid text PRIMARY KEY,
          ref text NOT NULL UNIQUE REFERENCES ${s}.messages (ref) ON DELETE CASCADE,
          state text NOT NULL,
          attempts integer NOT NULL DEFAULT 0,
          last_status_code integer,
          last_error text,
          next_attempt_at bigint,
          lease_owner text,
          lease_until bigint,
          created_at bigint NOT NULL
        )`,
        `CREATE INDEX callbacks_pending_idx ON ${s}.callbacks (next_attempt_at, seq) WHERE state = 'pending'`,
      ],
    },
    {
      // Finding messages whose receipts never came (expireOverdue).
      version: 2,
      statements: [`CREATE INDEX messages_overdue ON ${s}.messages (updated_at, seq) WHERE state = 'submitted'`],
    },
    {
      // No foreign keys. Each one ran a trigger per inserted row that looked the parent up
      // and locked it (FOR KEY SHARE): per message a lookup and a lock of the message for
      // its part, and of the part for its carrier id. Dropping them measured 1.3-1.7x the
      // insert rate of 100-message requests. The adapter is the only writer of these tables
      // and writes a parent with its children in one statement or function, and purge now
      // deletes the children itself (it relied on ON DELETE CASCADE).
      version: 3,
      statements: [
        `ALTER TABLE ${s}.carrier_ids DROP CONSTRAINT IF EXISTS carrier_ids_ref_idx_fkey`,
        `ALTER TABLE ${s}.parts DROP CONSTRAINT IF EXISTS parts_ref_fkey`,
        `ALTER TABLE ${s}.callbacks DROP CONSTRAINT IF EXISTS callbacks_ref_fkey`,
      ],
    },
    {
      // A message's parts move into its own row, as jsonb in the shape the SQLite adapter
      // keeps (storage/stored-parts.ts): each step of a message (insert, submission, receipt,
      // the record it returns) then writes and reads one row rather than two tables. Measured
      // in BENCHMARKS.md, "Tenth session". The functions of this version carry the suffix
      // `_v4` (FUNCTIONS_SCHEMA_VERSION); the earlier ones, written for the parts table, go.
      //
      // Rolling upgrades: an instance of an earlier version still running after this
      // migration fails every step that touches the parts table (its inserts, claims,
      // lookups and functions) with an error, so it stores nothing half-made and accepts
      // nothing; its leased messages are claimed again when their leases end. Stop earlier
      // instances before starting this version, or expect them to fail until replaced
      // (README, "Upgrading").
      version: 4,
      statements: [
        `ALTER TABLE ${s}.messages ADD COLUMN parts jsonb`,
        `UPDATE ${s}.messages m SET parts = coalesce((
          SELECT jsonb_agg(CASE WHEN p.outcome_state IS NULL THEN jsonb_build_array(p.carrier_id)
            ELSE jsonb_build_array(p.carrier_id, p.outcome_state, p.outcome_reason, coalesce(p.outcome_description, ''))
            END ORDER BY p.idx)
          FROM ${s}.parts p WHERE p.ref = m.ref), '[]'::jsonb)`,
        `ALTER TABLE ${s}.messages ALTER COLUMN parts SET NOT NULL`,
        `DROP TABLE ${s}.parts`,
        `DO $$
        DECLARE f regprocedure;
        BEGIN
          FOR f IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
            WHERE p.pronamespace = '${s}'::regnamespace AND p.proname IN ('terminate', 'record_submission',
              'apply_receipt', 'finish', 'expire_overdue', 'record_submissions', 'apply_receipts', 'due_messages',
              'due_callbacks')
          LOOP
            EXECUTE 'DROP FUNCTION ' || f::text;
          END LOOP;
        END $$`,
      ],
    },
  ];
}

/**
 * A row of the record query: message columns plus its parts and callback. The `bigint`
 * times are strings in a row (pg keeps int8 exact) and numbers in the stored functions'
 * JSON; {@link toRecord} takes either.
 */
interface RecordRow {
  ref: string;
  principal_id: string;
  endpoint: string;
  profile_code: string;
  sender: string;
  recipient: string;
  text: string;
  message_type: number;
  req_type: number;
  external_id: string;
  recipient_field: string;
  reference_field: string;
  sms_count: number;
  encoding: string;
  callback_url: string | null;
  callback_secret: string | null;
  created_at: string | number;
  state: string;
  status_reason: string | null;
  status_description: string | null;
  attempts: number;
  last_error: string | null;
  updated_at: string | number;
  /** The `parts` column (storage/stored-parts.ts), parsed by pg. */
  parts: StoredPart[];
  cb_state: string | null;
  cb_attempts: number | null;
  cb_last_status_code: number | null;
  cb_last_error: string | null;
  cb_next_attempt_at: string | number | null;
}

/** A transition as the stored functions return it (`terminate`). */
interface TransitionJson {
  previousState: MessageState;
  message: RecordRow;
  /** The report stored leased to the receipt's lease owner, else null (or absent: `finish`, `expire_overdue`). */
  leasedReport?: LeasedReport | null;
}

/** What `record_submission` returns; the ref is the caller's. */
type SubmissionJson = { kind: 'part' | 'stale' } | { kind: 'submitted'; message: RecordRow };

/** What `apply_receipt` returns. */
type ReceiptJson =
  | { kind: 'unknown' }
  | { kind: 'duplicate' | 'part' | 'late'; ref: string }
  | { kind: 'terminal'; ref: string; transition: TransitionJson };

/** One `insertMessages` call, as its batch carries it: its messages and their lease, if any. */
interface InsertCall {
  messages: readonly NewMessage[];
  owner: string | null;
  until: number | null;
}

/** One `recordSubmission` call, as its batch carries it. */
interface SubmissionCall {
  ref: string;
  index: number;
  carrierId: string;
  now: number;
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

/** One `recordCallbackAttempt` call, as its batch carries it. */
interface AttemptCall {
  uid: string;
  attempt: CallbackAttempt;
}

/** One `applyReceipt` call, with the uid its report gets if it ends a message with a URL. */
interface ReceiptCall {
  receipt: PartReceipt;
  uid: string;
}

function toSubmissionResult(call: SubmissionCall, json: SubmissionJson): SubmissionResult {
  if (json.kind !== 'submitted') return { kind: json.kind, ref: call.ref };
  return { kind: 'submitted', transition: { message: toRecord(json.message), previousState: 'queued' } };
}

function toReceiptResult(json: ReceiptJson): ReceiptResult {
  switch (json.kind) {
    case 'unknown':
      return { kind: 'unknown' };
    case 'terminal':
      return { kind: 'terminal', ref: json.ref, transition: toTransition(json.transition) };
    default:
      return { kind: json.kind, ref: json.ref };
  }
}

function toTransition(json: TransitionJson): Transition {
  const transition: Transition = { message: toRecord(json.message), previousState: json.previousState };
  if (json.leasedReport != null) transition.leasedReport = json.leasedReport;
  return transition;
}

/** int8 columns come back as strings (pg keeps them exact); times fit a double. */
function toMs(value: string | number | null): number | null {
  return value === null ? null : Number(value);
}

function toRecord(row: RecordRow): MessageRecord {
  const parts = partsFromStored(row.parts);
  const callback: CallbackState | null =
    row.cb_state === null
      ? null
      : {
          state: row.cb_state as CallbackState['state'],
          attempts: row.cb_attempts ?? 0,
          lastStatusCode: row.cb_last_status_code,
          lastError: row.cb_last_error,
          nextAttemptAt: toMs(row.cb_next_attempt_at),
        };
  return {
    ref: row.ref,
    principalId: row.principal_id,
    endpoint: row.endpoint as Endpoint,
    profileCode: row.profile_code,
    sender: row.sender,
    recipient: row.recipient,
    text: row.text,
    messageType: row.message_type,
    reqType: row.req_type,
    externalId: row.external_id,
    recipientField: row.recipient_field as RecipientField,
    referenceField: row.reference_field as ReferenceField,
    smsCount: row.sms_count,
    encoding: row.encoding as Encoding,
    callbackUrl: row.callback_url,
    callbackSecret: row.callback_secret,
    createdAt: Number(row.created_at),
    state: row.state as MessageState,
    statusReason: row.status_reason as StatusReason | null,
    statusDescription: row.status_description,
    attempts: row.attempts,
    lastError: row.last_error,
    updatedAt: Number(row.updated_at),
    parts,
    callback,
  };
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
 * the schema (src/storage/postgres-functions.ts), kept current by the migration. The hot
 * ones (`insertMessages`, `recordSubmission`, `applyReceipt`, `recordCallbackAttempt`) are
 * also batched: calls made while others are out go together in one statement, so under
 * load they share commits (src/util/batcher.ts). A batch holds its messages' row locks until its commit; two
 * batches that deadlock are rolled back by PostgreSQL and their calls run one by one.
 */
export class PostgresStorage implements Storage {
  private readonly pool: Pool;
  private readonly schema: string;
  private readonly s: string;
  private readonly t: { messages: string; carrierIds: string; callbacks: string; migrations: string };
  private readonly recordSql: string;
  /** The stored functions' qualified names, derived from the schema like `t`. */
  private readonly f: FunctionNames;
  private readonly functions: StoredFunction[];
  private readying: Promise<void> | undefined;
  /** Concurrent calls of the hot steps, sent together (src/util/batcher.ts). */
  private readonly inserts: Batcher<InsertCall, void>;
  private readonly submissions: Batcher<SubmissionCall, SubmissionResult>;
  private readonly receipts: Batcher<ReceiptCall, ReceiptResult>;
  private readonly attempts: Batcher<AttemptCall, void>;

  /** Throws a TypeError for a missing pool, a bad schema name or an unknown option. */
  constructor(options: PostgresStorageOptions) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError('PostgresStorage: options must be an object with a `pool`');
    }
    assertKnownKeys('PostgresStorage', options, KNOWN_OPTIONS);
    const pool = options.pool as Partial<Pool> | null | undefined;
    if (typeof pool?.query !== 'function' || typeof pool.connect !== 'function') {
      throw new TypeError('PostgresStorage: `pool` must be a pg.Pool (new pg.Pool({...}))');
    }
    const schema = options.schema ?? 'sms_outbox';
    if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) {
      throw new TypeError(
        `PostgresStorage: \`schema\` must be letters, digits and _ (not starting with a digit, at most 63), got ${JSON.stringify(schema)}`,
      );
    }
    this.pool = options.pool;
    this.schema = schema;
    this.s = quoteIdent(schema);
    this.t = {
      messages: `${this.s}.messages`,
      carrierIds: `${this.s}.carrier_ids`,
      callbacks: `${this.s}.callbacks`,
      migrations: `${this.s}.migrations`,
    };
    // The record query is built once: `FROM` is filled in by each caller.
    this.recordSql = `SELECT m.ref, m.principal_id, m.endpoint, m.profile_code, m.sender, m.recipient, m.text,
        m.message_type, m.req_type, m.external_id, m.recipient_field, m.reference_field, m.sms_count,
        m.encoding, m.callback_url, m.callback_secret, m.created_at, m.state, m.status_reason,
        m.status_description, m.attempts, m.last_error, m.updated_at, m.parts,
        c.state AS cb_state, c.attempts AS cb_attempts, c.last_status_code AS cb_last_status_code,
        c.last_error AS cb_last_error, c.next_attempt_at AS cb_next_attempt_at`;
    this.f = functionNames(this.s);
    this.functions = storedFunctions(this.s, this.t, this.recordSql);
    // Each batch is one statement (one transaction, one commit). A few out at once keep
    // PostgreSQL's other core busy while this process prepares the next; more would only
    // take connections from the host's pool.
    const batching = { maxBatch: 100, maxInFlight: 3 };
    this.inserts = new Batcher({ ...batching, ...runAsOneStatement((calls) => this.insertNow(calls)) });
    this.submissions = new Batcher({
      ...batching,
      runOne: (call) => this.recordSubmissionNow(call),
      runBatch: (calls) => this.recordSubmissionsNow(calls),
    });
    this.receipts = new Batcher({
      ...batching,
      runOne: (call) => this.applyReceiptNow(call),
      runBatch: (calls) => this.applyReceiptsNow(calls),
    });
    this.attempts = new Batcher({ ...batching, ...runAsOneStatement((calls) => this.recordCallbackAttemptsNow(calls)) });
  }

  /**
   * Creates the schema and applies pending migrations; memoised, so every call after the
   * first returns the same promise (a failed attempt is forgotten, so the next call retries).
   * The other methods call it themselves; call it at startup to fail early.
   */
  ready(): Promise<void> {
    if (this.readying === undefined) {
      this.readying = this.migrate().catch((error: unknown) => {
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
   * Stores all messages and their parts in one statement: all or none. Requests stored at
   * the same time share the statement (and its commit); if it fails, each request is
   * stored on its own, so one request's failure is not another's.
   */
  async insertMessages(messages: readonly NewMessage[], lease?: InsertLease): Promise<void> {
    await this.ready();
    if (messages.length === 0) return;
    // Copied now: the caller may reuse its array before the batch goes out.
    await this.inserts.call({ messages: [...messages], owner: lease?.owner ?? null, until: lease?.until ?? null });
  }

  /** The insert itself: one statement for every message of every call given. */
  private async insertNow(calls: readonly InsertCall[]): Promise<void> {
    const columns: unknown[][] = Array.from({ length: 20 }, () => []);
    for (const { messages, owner, until } of calls) {
      for (const m of messages) {
        const row = [
          m.ref, m.principalId, m.endpoint, m.profileCode, m.sender, m.recipient, m.text, m.messageType, m.reqType,
          m.externalId, m.recipientField, m.referenceField, m.smsCount, m.encoding, m.callbackUrl, m.callbackSecret,
          m.createdAt, owner, until, unsubmittedPartsJson(m.smsCount),
        ];
        row.forEach((value, i) => columns[i]!.push(value));
      }
    }
    // One statement, so it is atomic without an explicit transaction and costs one round
    // trip however many messages the request carried.
    await this.pool.query(
      `INSERT INTO ${this.t.messages} (ref, principal_id, endpoint, profile_code, sender, recipient, text,
        message_type, req_type, external_id, recipient_field, reference_field, sms_count, encoding,
        callback_url, callback_secret, created_at, state, attempts, next_attempt_at, lease_owner, lease_until,
        updated_at, parts)
      SELECT ref, principal_id, endpoint, profile_code, sender, recipient, text, message_type, req_type,
        external_id, recipient_field, reference_field, sms_count, encoding, callback_url, callback_secret,
        created_at, 'queued', 0, created_at, lease_owner, lease_until, created_at, parts
      FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
        $8::int4[], $9::int4[], $10::text[], $11::text[], $12::text[], $13::int4[], $14::text[], $15::text[],
        $16::text[], $17::int8[], $18::text[], $19::int8[], $20::jsonb[]) WITH ORDINALITY
        AS t(ref, principal_id, endpoint, profile_code, sender, recipient, text, message_type, req_type,
          external_id, recipient_field, reference_field, sms_count, encoding, callback_url, callback_secret,
          created_at, lease_owner, lease_until, parts, ord)
      ORDER BY ord`,
      columns,
    );
  }

  /** Leases up to `limit` due, unleased `queued` messages, oldest first, with their parts. */
  async claimMessages(options: ClaimOptions): Promise<MessageRecord[]> {
    await this.ready();
    if (options.limit <= 0) return [];
    const { rows } = await this.pool.query<RecordRow>(
      `WITH claimed AS (
        UPDATE ${this.t.messages} SET lease_owner = $1, lease_until = $2
        WHERE ref IN (SELECT * FROM ${this.f.dueMessages}($3, $4))
        RETURNING *
      )
      ${this.recordSql}
      FROM claimed m LEFT JOIN ${this.t.callbacks} c ON c.ref = m.ref
      ORDER BY m.created_at, m.seq`,
      [options.owner, options.now + options.leaseMs, options.now, options.limit],
    );
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
    return this.submissions.call({ ref, index, carrierId, now });
  }

  private async recordSubmissionNow(call: SubmissionCall): Promise<SubmissionResult> {
    const { rows } = await this.pool.query<{ result: SubmissionJson }>(
      `SELECT ${this.f.recordSubmission}($1::text, $2::int4, $3::text, $4::int8) AS result`,
      [call.ref, call.index, call.carrierId, call.now],
    );
    return toSubmissionResult(call, rows[0]!.result);
  }

  private async recordSubmissionsNow(calls: readonly SubmissionCall[]): Promise<SubmissionResult[]> {
    const { rows } = await this.pool.query<{ result: SubmissionJson[] }>(
      `SELECT ${this.f.recordSubmissions}($1::text[], $2::int4[], $3::text[], $4::int8[]) AS result`,
      [calls.map((c) => c.ref), calls.map((c) => c.index), calls.map((c) => c.carrierId), calls.map((c) => c.now)],
    );
    return rows[0]!.result.map((result, i) => toSubmissionResult(calls[i]!, result));
  }

  /** Gives a `queued` message back for another attempt at `nextAttemptAt`. */
  async reschedule(ref: string, nextAttemptAt: number, error: string, now: number): Promise<void> {
    await this.ready();
    await this.pool.query(
      `UPDATE ${this.t.messages} SET attempts = attempts + 1, last_error = $2, next_attempt_at = $3,
        lease_owner = NULL, lease_until = NULL, updated_at = $4
      WHERE ref = $1 AND state = 'queued'`,
      [ref, error, nextAttemptAt, now],
    );
  }

  /**
   * Ends a message that is not yet terminal; `null` if it already is (or is unknown). One
   * round trip (the stored function `finish`); the report's uid is made here, used only
   * if the message has a callback URL.
   */
  async finish(ref: string, outcome: Outcome, now: number): Promise<Transition | null> {
    await this.ready();
    const { rows } = await this.pool.query<{ result: TransitionJson | null }>(
      `SELECT ${this.f.finish}($1::text, $2::text, $3::text, $4::text, $5::int8, $6::text) AS result`,
      [ref, outcome.state, outcome.reason, outcome.description, now, randomUUID()],
    );
    const result = rows[0]!.result;
    return result === null ? null : toTransition(result);
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
    const { rows } = await this.pool.query<{ result: TransitionJson[] }>(
      `SELECT ${this.f.expireOverdue}($1::int8, $2::int8, $3::text, $4::text, $5::text, $6::int8, $7::text[]) AS result`,
      [before, count, outcome.state, outcome.reason, outcome.description, now, uids],
    );
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
    return this.receipts.call({ receipt, uid: randomUUID() });
  }

  private async applyReceiptNow({ receipt, uid }: ReceiptCall): Promise<ReceiptResult> {
    const { outcome } = receipt;
    const { rows } = await this.pool.query<{ result: ReceiptJson }>(
      `SELECT ${this.f.applyReceipt}($1::text[], $2::text, $3::text, $4::text, $5::int8, $6::text, $7::text, $8::int8) AS result`,
      [
        receipt.carrierIds,
        outcome.state,
        outcome.reason,
        outcome.description,
        receipt.now,
        uid,
        receipt.reportLease?.owner ?? null,
        receipt.reportLease?.until ?? null,
      ],
    );
    return toReceiptResult(rows[0]!.result);
  }

  private async applyReceiptsNow(calls: readonly ReceiptCall[]): Promise<ReceiptResult[]> {
    const receipts = calls.map((call) => call.receipt);
    const { rows } = await this.pool.query<{ result: ReceiptJson[] }>(
      `SELECT ${this.f.applyReceipts}($1::json, $2::text[], $3::text[], $4::text[], $5::int8[], $6::text[], $7::text[], $8::int8[]) AS result`,
      [
        JSON.stringify(receipts.map((r) => r.carrierIds)),
        receipts.map((r) => r.outcome.state),
        receipts.map((r) => r.outcome.reason),
        receipts.map((r) => r.outcome.description),
        receipts.map((r) => r.now),
        calls.map((call) => call.uid),
        receipts.map((r) => r.reportLease?.owner ?? null),
        receipts.map((r) => r.reportLease?.until ?? null),
      ],
    );
    return rows[0]!.result.map(toReceiptResult);
  }

  /** The principal's message `ref`, or `null`. */
  async getMessage(principalId: string, ref: string): Promise<MessageRecord | null> {
    await this.ready();
    const { rows } = await this.pool.query<RecordRow>(
      `${this.recordSql}
      FROM ${this.t.messages} m LEFT JOIN ${this.t.callbacks} c ON c.ref = m.ref
      WHERE m.ref = $2 AND m.principal_id = $1`,
      [principalId, ref],
    );
    return rows[0] === undefined ? null : toRecord(rows[0]);
  }

  /** The principal's messages with `externalId`, newest first, at most `limit`. */
  async findByExternalId(principalId: string, externalId: string, limit: number): Promise<MessageRecord[]> {
    await this.ready();
    if (limit <= 0) return [];
    const { rows } = await this.pool.query<RecordRow>(
      `${this.recordSql}
      FROM ${this.t.messages} m LEFT JOIN ${this.t.callbacks} c ON c.ref = m.ref
      WHERE m.principal_id = $1 AND m.external_id = $2
      ORDER BY m.created_at DESC, m.seq DESC
      LIMIT $3`,
      [principalId, externalId, limit],
    );
    return rows.map(toRecord);
  }

  /** Leases up to `limit` due pending delivery reports, oldest due first. */
  async claimCallbacks(options: ClaimOptions): Promise<DueCallback[]> {
    await this.ready();
    if (options.limit <= 0) return [];
    const { rows } = await this.pool.query<RecordRow & { cb_uid: string }>(
      `WITH claimed AS (
        UPDATE ${this.t.callbacks} SET lease_owner = $1, lease_until = $2
        WHERE uid IN (SELECT * FROM ${this.f.dueCallbacks}($3, $4))
        RETURNING *
      )
      ${this.recordSql}, c.uid AS cb_uid
      FROM claimed c JOIN ${this.t.messages} m ON m.ref = c.ref
      ORDER BY c.next_attempt_at, c.seq`,
      [options.owner, options.now + options.leaseMs, options.now, options.limit],
    );
    return rows.map((row) => ({ uid: row.cb_uid, attempts: row.cb_attempts ?? 0, message: toRecord(row) }));
  }

  /** Makes pending claimed reports claimable again at `until`. */
  async deferCallbacks(uids: readonly string[], until: number): Promise<void> {
    await this.ready();
    if (uids.length === 0) return;
    await this.pool.query(`UPDATE ${this.t.callbacks} SET lease_until = $1 WHERE uid = ANY($2::text[]) AND ${UNFINISHED_REPORT}`, [
      until,
      uids,
    ]);
  }

  /** Records one attempt of report `uid` and ends its lease; ignored once it is finished. */
  async recordCallbackAttempt(uid: string, attempt: CallbackAttempt): Promise<void> {
    await this.ready();
    // Batched like the message steps: one report is one attempt, so without it every report
    // was a transaction of its own, waiting for its own WAL flush.
    await this.attempts.call({ uid, attempt });
  }

  /** Records `calls` in one statement; a uid appears at most once in a batch (one attempt runs at a time). */
  private async recordCallbackAttemptsNow(calls: readonly AttemptCall[]): Promise<void> {
    const retry = calls.map(({ attempt }) => attempt.result === 'retry');
    // The reports are found by their uids (`uid = ANY`: one primary-key probe each); see
    // UNFINISHED_REPORT for why the state is not tested as `= 'pending'`.
    await this.pool.query(
      `UPDATE ${this.t.callbacks} c SET attempts = c.attempts + 1, last_status_code = a.status_code, last_error = a.error,
        state = a.state, next_attempt_at = a.next_attempt_at, lease_owner = NULL, lease_until = NULL
      FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::bigint[])
        AS a(uid, status_code, error, state, next_attempt_at)
      WHERE c.uid = ANY ($1::text[]) AND c.uid = a.uid AND c.${UNFINISHED_REPORT}`,
      [
        calls.map((call) => call.uid),
        calls.map((call) => call.attempt.statusCode),
        calls.map((call) => call.attempt.error),
        calls.map((call, i) => (retry[i] ? 'pending' : call.attempt.result)),
        calls.map((call, i) => (retry[i] ? (call.attempt.nextAttemptAt ?? call.attempt.now) : null)),
      ],
    );
  }

  /** Deletes up to `limit` terminal messages changed before `before` without a pending report. */
  async purge(before: number, limit: number): Promise<number> {
    await this.ready();
    if (limit <= 0) return 0;
    // The message with its carrier ids and finished report, in one statement (every
    // data-modifying part of it runs, on the same locked rows).
    const result = await this.pool.query(
      `WITH doomed AS (
        SELECT m.ref FROM ${this.t.messages} m
        WHERE m.state = ANY($1::text[]) AND m.updated_at < $2
          AND NOT EXISTS (SELECT 1 FROM ${this.t.callbacks} c WHERE c.ref = m.ref AND c.state = 'pending')
        ORDER BY m.updated_at, m.seq
        LIMIT $3
        FOR UPDATE SKIP LOCKED
      ),
      carrier_ids AS (DELETE FROM ${this.t.carrierIds} WHERE ref IN (SELECT ref FROM doomed)),
      callbacks AS (DELETE FROM ${this.t.callbacks} WHERE ref IN (SELECT ref FROM doomed))
      DELETE FROM ${this.t.messages} WHERE ref IN (SELECT ref FROM doomed)`,
      [TERMINAL_STATES, before, limit],
    );
    return result.rowCount ?? 0;
  }

  private async migrate(): Promise<void> {
    await this.transaction(async (db) => {
      // Instances starting together queue here; each one then sees what the first applied.
      await db.query('SELECT pg_advisory_xact_lock($1::int4, $2::int4)', [LOCK_NAMESPACE, lockKey(this.schema)]);
      await db.query(`CREATE SCHEMA IF NOT EXISTS ${this.s}`);
      await db.query(
        `CREATE TABLE IF NOT EXISTS ${this.t.migrations} (version integer PRIMARY KEY, applied_at bigint NOT NULL)`,
      );
      const { rows } = await db.query<{ version: number }>(`SELECT version FROM ${this.t.migrations}`);
      const applied = new Set(rows.map((row) => row.version));
      const known = migrations(this.s);
      const newest = known[known.length - 1]!.version;
      const ahead = rows.map((row) => row.version).filter((version) => version > newest);
      if (ahead.length > 0) {
        // A newer version migrated this schema: this version's SQL may no longer fit it, and
        // its functions must not be put back over the newer ones. Refusing to start is the
        // one safe answer during a rolling upgrade's overlap (README, "Upgrading").
        throw new Error(
          `PostgresStorage: schema ${this.schema} is at migration ${Math.max(...ahead)}, newer than this version of sms-outbox knows (${newest}); run the newer version`,
        );
      }
      for (const migration of known) {
        if (applied.has(migration.version)) continue;
        for (const statement of migration.statements) await db.query(statement);
        await db.query(`INSERT INTO ${this.t.migrations} (version, applied_at) VALUES ($1, $2)`, [
          migration.version,
          Date.now(),
        ]);
      }
      await this.installFunctions(db);
    });
  }

  /**
   * Creates the stored functions (src/storage/postgres-functions.ts) that are missing or
   * whose body differs from this version's, under the migration's advisory lock. They are
   * not a numbered migration: a function is replaced in place when its code changes, and a
   * schema migrated before the functions existed gets them on its next start. A start that
   * finds them up to date writes nothing (no catalog churn, and a role that may not
   * replace them can still start). A change of a function's arguments adds an overload
   * beside the earlier one, which instances of the earlier version, still running during a
   * rollout, go on calling; the migration that next bumps `FUNCTIONS_SCHEMA_VERSION` drops
   * every overload of the earlier names. A change of a result type needs a `DROP FUNCTION`
   * first: `CREATE OR REPLACE` would fail.
   */
  private async installFunctions(db: PoolClient): Promise<void> {
    const { rows } = await db.query<{ proname: string; prosrc: string }>(
      `SELECT p.proname, p.prosrc FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = $1 AND p.proname = ANY($2::text[])`,
      [this.schema, this.functions.map((fn) => fn.name)],
    );
    const stored = new Map<string, string[]>();
    for (const row of rows) stored.set(row.proname, [...(stored.get(row.proname) ?? []), row.prosrc]);
    for (const fn of this.functions) {
      if (stored.get(fn.name)?.includes(fn.body) === true) continue;
      await db.query(fn.create);
    }
  }

  /** Runs `work` in a transaction on one client; rolls back if it throws. */
  private async transaction<T>(work: (db: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    // A connection that dies while checked out emits 'error' on the client, and the pool
    // listens only to idle ones: without this listener the process would crash. The query
    // in flight rejects on its own; the client is then dropped, not reused.
    const onError = (error: Error): void => {
      broken = error;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackError) {
        // A client that cannot roll back is in an unknown state: the pool must drop it.
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      }
      throw error;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }
}

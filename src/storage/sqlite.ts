/**
 * The SQLite storage: one durable file for a single process, on better-sqlite3.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { foldParts, isTerminal, PENDING_STATES, TERMINAL_STATES } from '../lifecycle/states.js';
import type { MessageState, Outcome, StatusReason } from '../lifecycle/states.js';
import { assertKnownKeys, assertNumber } from '../util/known-keys.js';
import { requirePeer } from '../util/require-peer.js';
import { GroupCommit } from './sqlite-group-commit.js';
import { partsFromStored, storedPartsJson, unsubmittedPartsJson, type StoredPart } from './stored-parts.js';
import type {
  CallbackAttempt,
  CallbackState,
  ClaimOptions,
  DueCallback,
  InsertLease,
  Encoding,
  Endpoint,
  MessageRecord,
  NewMessage,
  PartReceipt,
  PartRecord,
  ReceiptResult,
  RecipientField,
  ReferenceField,
  Storage,
  SubmissionResult,
  Transition,
} from './contract.js';

/** Options of {@link SqliteStorage}. Give `path` or `database`, not both. */
export interface SqliteStorageOptions {
  /** The database file, created if missing, with its folder (`':memory:'` for a database in memory). */
  path?: string;
  /**
   * An open better-sqlite3 handle the host made instead of `path`; `close()` leaves it
   * open. The adapter sets WAL mode, `synchronous` and `busy_timeout` on it and owns its
   * `PRAGMA user_version` (the schema version), so give it a database of its own.
   */
  database?: Database.Database;
  /**
   * How hard each commit is pushed to disk. `'FULL'` (default): in WAL mode a commit
   * survives power loss and an OS crash. `'NORMAL'`: faster; a commit survives a killed
   * process, but the last commits before a power loss or OS crash may be lost.
   */
  synchronous?: 'FULL' | 'NORMAL';
  /** How long (ms) a write waits for another connection's lock before it fails; default 5000. */
  busyTimeoutMs?: number;
}

const KNOWN_OPTIONS = ['path', 'database', 'synchronous', 'busyTimeoutMs'] as const;

/**
 * better-sqlite3, loaded when this module is: at `import 'sms-outbox/sqlite'`, as a static
 * import would, but failing with `npm install better-sqlite3` rather than Node's bare
 * ERR_MODULE_NOT_FOUND (see util/require-peer.ts).
 */
const BetterSqlite3 = requirePeer<typeof Database>('better-sqlite3', 'sms-outbox/sqlite');

/**
 * Creates the folder of the database file `path`, as `new SqliteStorage({ path:
 * './data/sms.db' })` is expected to work on a fresh checkout. Not for `':memory:'`, which
 * names no file (an empty path, SQLite's temporary database, is refused before this).
 */
function createFolderOf(path: string): void {
  if (path === ':memory:') return;
  const folder = dirname(path);
  try {
    mkdirSync(folder, { recursive: true });
  } catch (error) {
    throw new Error(`SqliteStorage: cannot create the folder ${folder} of ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/** `('delivered', ...)`: the purge index's predicate up to schema version 3 (migration 1 keeps it). */
const TERMINAL_SQL = `(${TERMINAL_STATES.map((state) => `'${state}'`).join(', ')})`;

/**
 * A terminal message, as the purge index (from schema version 4) and its query both spell it,
 * so that SQLite uses the index: not one of the two pending states.
 *
 * Why not `state IN (<the five terminal states>)`, as up to version 3: SQLite checks a
 * partial index's predicate on every write to the table, and it evaluates a constant `IN`
 * list of more than two values by building a temporary b-tree of the list, at every run of
 * the statement. So every insert, update and delete of a message opened one or two
 * (a pager, a page cache, a zeroed page each), which callgrind showed as ~9% of sqlite-1's
 * instructions; with two values SQLite compares them in place (see BENCHMARKS.md, seventh session).
 */
const PURGEABLE_SQL = `state NOT IN (${PENDING_STATES.map((state) => `'${state}'`).join(', ')})`;

/**
 * The schema, one migration per entry; `PRAGMA user_version` counts those applied. Append
 * only: a database at version N gets entries N.. on open. Times are epoch-ms integers.
 * Exported for the tests that build a database as an earlier version left it; not part
 * of the package's API.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE sms_messages (
    id INTEGER PRIMARY KEY,
    ref TEXT NOT NULL UNIQUE,
    principal_id TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    profile_code TEXT NOT NULL,
    sender TEXT NOT NULL,
    recipient TEXT NOT NULL,
    text TEXT NOT NULL,
    message_type INTEGER NOT NULL,
    req_type INTEGER NOT NULL,
    external_id TEXT NOT NULL,
    recipient_field TEXT NOT NULL,
    reference_field TEXT NOT NULL,
    sms_count INTEGER NOT NULL,
    encoding TEXT NOT NULL,
    callback_url TEXT,
    callback_secret TEXT,
    created_at INTEGER NOT NULL,
    state TEXT NOT NULL,
    status_reason TEXT,
    status_description TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    next_attempt_at INTEGER NOT NULL,
    lease_owner TEXT,
    lease_until INTEGER,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX sms_messages_claim ON sms_messages (created_at, id) WHERE state = 'queued';
  CREATE INDEX sms_messages_external ON sms_messages (principal_id, external_id, created_at, id);
  CREATE INDEX sms_messages_purge ON sms_messages (updated_at, id) WHERE state IN ${TERMINAL_SQL};

  CREATE TABLE sms_parts (
    message_id INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    carrier_id TEXT,
    outcome_state TEXT,
    outcome_reason TEXT,
    outcome_description TEXT,
    PRIMARY KEY (message_id, idx)
  ) WITHOUT ROWID;

  CREATE TABLE sms_carrier_ids (
    carrier_id TEXT PRIMARY KEY,
    message_id INTEGER NOT NULL,
    idx INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX sms_carrier_ids_message ON sms_carrier_ids (message_id);

  CREATE TABLE sms_callbacks (
    id INTEGER PRIMARY KEY,
    uid TEXT NOT NULL UNIQUE,
    message_id INTEGER NOT NULL UNIQUE,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_status_code INTEGER,
    last_error TEXT,
    next_attempt_at INTEGER,
    lease_owner TEXT,
    lease_until INTEGER
  );
  CREATE INDEX sms_callbacks_due ON sms_callbacks (next_attempt_at, id) WHERE state = 'pending';
  `,
  // 2: finding messages whose receipts never came (expireOverdue).
  `CREATE INDEX sms_messages_overdue ON sms_messages (updated_at, id) WHERE state = 'submitted';`,
  // 3: a message's parts move into its own row, as JSON (see partsOf). The carrier-id
  // index stays a table: receipts are looked up by it.
  `
  ALTER TABLE sms_messages ADD COLUMN parts TEXT NOT NULL DEFAULT '[]';
  UPDATE sms_messages SET parts = (
    SELECT json_group_array(CASE WHEN p.outcome_state IS NULL THEN json_array(p.carrier_id)
      ELSE json_array(p.carrier_id, p.outcome_state, p.outcome_reason, p.outcome_description) END)
    FROM (SELECT * FROM sms_parts WHERE message_id = sms_messages.id ORDER BY idx) p);
  DROP TABLE sms_parts;
  `,
  // 4: the purge index says "not pending" rather than listing the terminal states (see PURGEABLE_SQL).
  `
  DROP INDEX sms_messages_purge;
  CREATE INDEX sms_messages_purge ON sms_messages (updated_at, id) WHERE ${PURGEABLE_SQL};
  `,
];

interface MessageRow {
  id: number;
  ref: string;
  principal_id: string;
  endpoint: Endpoint;
  profile_code: string;
  sender: string;
  recipient: string;
  text: string;
  message_type: number;
  req_type: number;
  external_id: string;
  recipient_field: RecipientField;
  reference_field: ReferenceField;
  sms_count: number;
  encoding: Encoding;
  callback_url: string | null;
  callback_secret: string | null;
  created_at: number;
  state: MessageState;
  status_reason: StatusReason | null;
  status_description: string | null;
  attempts: number;
  last_error: string | null;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  updated_at: number;
  /** The message's parts as JSON (see {@link partsOf}). */
  parts: string;
}

/** The message columns the reads select, in {@link toMessageRow}'s order (the table's). */
const MESSAGE_COLUMNS = `id, ref, principal_id, endpoint, profile_code, sender, recipient, text, message_type,
  req_type, external_id, recipient_field, reference_field, sms_count, encoding, callback_url, callback_secret,
  created_at, state, status_reason, status_description, attempts, last_error, next_attempt_at, lease_owner,
  lease_until, updated_at, parts`;

/** A message row from a raw (array) result of {@link MESSAGE_COLUMNS}. */
function toMessageRow(r: unknown[]): MessageRow {
  return {
    id: r[0] as number,
    ref: r[1] as string,
    principal_id: r[2] as string,
    endpoint: r[3] as Endpoint,
    profile_code: r[4] as string,
    sender: r[5] as string,
    recipient: r[6] as string,
    text: r[7] as string,
    message_type: r[8] as number,
    req_type: r[9] as number,
    external_id: r[10] as string,
    recipient_field: r[11] as RecipientField,
    reference_field: r[12] as ReferenceField,
    sms_count: r[13] as number,
    encoding: r[14] as Encoding,
    callback_url: r[15] as string | null,
    callback_secret: r[16] as string | null,
    created_at: r[17] as number,
    state: r[18] as MessageState,
    status_reason: r[19] as StatusReason | null,
    status_description: r[20] as string | null,
    attempts: r[21] as number,
    last_error: r[22] as string | null,
    next_attempt_at: r[23] as number,
    lease_owner: r[24] as string | null,
    lease_until: r[25] as number | null,
    updated_at: r[26] as number,
    parts: r[27] as string,
  };
}

/**
 * Reads `statement`'s rows as arrays and converts each with `toRow`. better-sqlite3 builds
 * an object row in C++ by setting every column by name, which for a message row measured
 * twice as slow as the array (6.6 against 3.1 us); the worker reads a message row in each
 * of its steps.
 */
function readRows<P extends unknown[], R>(statement: Database.Statement<P, unknown[]>, toRow: (raw: unknown[]) => R) {
  statement.raw(true);
  return {
    get: (...params: P): R | undefined => {
      const raw = statement.get(...params);
      return raw === undefined ? undefined : toRow(raw);
    },
    all: (...params: P): R[] => statement.all(...params).map(toRow),
  };
}

interface CallbackRow {
  id: number;
  uid: string;
  message_id: number;
  state: CallbackState['state'];
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: number | null;
}

/** Inserts one message as `queued` with its parts, leased under `lease` if given (inside the caller's transaction). */
function insertMessage(s: Statements, m: NewMessage, lease: InsertLease | undefined): void {
  s.insertMessage.run([
    m.ref,
    m.principalId,
    m.endpoint,
    m.profileCode,
    m.sender,
    m.recipient,
    m.text,
    m.messageType,
    m.reqType,
    m.externalId,
    m.recipientField,
    m.referenceField,
    m.smsCount,
    m.encoding,
    m.callbackUrl,
    m.callbackSecret,
    m.createdAt,
    m.createdAt,
    lease?.owner ?? null,
    lease?.until ?? null,
    m.createdAt,
    unsubmittedPartsJson(m.smsCount),
  ]);
}

/** The parts of a message row, in index order, as new objects the caller may change (see storage/stored-parts.ts). */
function partsOf(row: MessageRow): PartRecord[] {
  return partsFromStored(JSON.parse(row.parts) as StoredPart[]);
}

/** A message record from its row, its parts and its report (`null` when it has none). */
function messageRecord(row: MessageRow, parts: PartRecord[], callback: CallbackState | null): MessageRecord {
  return {
    ref: row.ref,
    principalId: row.principal_id,
    endpoint: row.endpoint,
    profileCode: row.profile_code,
    sender: row.sender,
    recipient: row.recipient,
    text: row.text,
    messageType: row.message_type,
    reqType: row.req_type,
    externalId: row.external_id,
    recipientField: row.recipient_field,
    referenceField: row.reference_field,
    smsCount: row.sms_count,
    encoding: row.encoding,
    callbackUrl: row.callback_url,
    callbackSecret: row.callback_secret,
    createdAt: row.created_at,
    state: row.state,
    statusReason: row.status_reason,
    statusDescription: row.status_description,
    attempts: row.attempts,
    lastError: row.last_error,
    updatedAt: row.updated_at,
    parts,
    callback,
  };
}

/**
 * The prepared statements, made once when the schema is ready.
 *
 * Every `LIMIT` of a bound value is written `LIMIT +?`: SQLite reads the value of a bare
 * `LIMIT ?` while planning, and then plans the statement again each time the value is bound,
 * so each claim was parsed and planned anew (25 us a claim against 4 us, measured). The
 * unary plus makes it an expression the planner does not read; the results are the same.
 */
function prepareStatements(db: Database.Database) {
  return {
    insertMessage: db.prepare<[unknown[]]>(`
      INSERT INTO sms_messages (ref, principal_id, endpoint, profile_code, sender, recipient, text,
        message_type, req_type, external_id, recipient_field, reference_field, sms_count, encoding,
        callback_url, callback_secret, created_at, state, attempts, next_attempt_at, lease_owner, lease_until,
        updated_at, parts)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?, ?, ?, ?)`),
    messageByRef: readRows(db.prepare<[string], unknown[]>(`SELECT ${MESSAGE_COLUMNS} FROM sms_messages WHERE ref = ?`), toMessageRow),
    messageById: readRows(db.prepare<[number], unknown[]>(`SELECT ${MESSAGE_COLUMNS} FROM sms_messages WHERE id = ?`), toMessageRow),
    callbackOfMessage: db.prepare<[number], CallbackRow>('SELECT * FROM sms_callbacks WHERE message_id = ?'),
    dueMessages: db.prepare<{ now: number; limit: number }, { id: number }>(`
      SELECT id FROM sms_messages
      WHERE state = 'queued' AND next_attempt_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
      ORDER BY created_at, id LIMIT +@limit`),
    leaseMessage: db.prepare<[string, number, number]>(
      'UPDATE sms_messages SET lease_owner = ?, lease_until = ? WHERE id = ?',
    ),
    indexCarrierId: db.prepare<[string, number, number]>(`
      INSERT INTO sms_carrier_ids (carrier_id, message_id, idx) VALUES (?, ?, ?)
      ON CONFLICT (carrier_id) DO UPDATE SET message_id = excluded.message_id, idx = excluded.idx`),
    markSubmitted: db.prepare<[string, number, number]>(
      `UPDATE sms_messages SET state = 'submitted', parts = ?, updated_at = ?, lease_owner = NULL, lease_until = NULL
      WHERE id = ?`,
    ),
    /** A part changed while its message stays where it is (more parts to come). */
    setPartsTouched: db.prepare<[string, number, number]>('UPDATE sms_messages SET parts = ?, updated_at = ? WHERE id = ?'),
    /** A part changed after its message moved on (a late submission or receipt): the message's time stays. */
    setParts: db.prepare<[string, number]>('UPDATE sms_messages SET parts = ? WHERE id = ?'),
    reschedule: db.prepare<[string, number, number, string]>(`
      UPDATE sms_messages SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?, updated_at = ?,
        lease_owner = NULL, lease_until = NULL
      WHERE ref = ? AND state = 'queued'`),
    terminate: db.prepare<[string, string, string, string, number, number]>(`
      UPDATE sms_messages SET state = ?, status_reason = ?, status_description = ?, parts = ?, updated_at = ?,
        lease_owner = NULL, lease_until = NULL
      WHERE id = ?`),
    insertCallback: db.prepare<[string, number, number, string | null, number | null]>(`
      INSERT INTO sms_callbacks (uid, message_id, state, attempts, next_attempt_at, lease_owner, lease_until)
      VALUES (?, ?, 'pending', 0, ?, ?, ?)`),
    carrierIdAddress: db.prepare<[string], { message_id: number; idx: number }>(
      'SELECT message_id, idx FROM sms_carrier_ids WHERE carrier_id = ?',
    ),
    byExternalId: readRows(
      db.prepare<[string, string, number], unknown[]>(`
        SELECT ${MESSAGE_COLUMNS} FROM sms_messages WHERE principal_id = ? AND external_id = ?
        ORDER BY created_at DESC, id DESC LIMIT +?`),
      toMessageRow,
    ),
    dueCallbacks: db.prepare<{ now: number; limit: number }, CallbackRow>(`
      SELECT * FROM sms_callbacks
      WHERE state = 'pending' AND next_attempt_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
      ORDER BY next_attempt_at, id LIMIT +@limit`),
    leaseCallback: db.prepare<[string, number, number]>(
      'UPDATE sms_callbacks SET lease_owner = ?, lease_until = ? WHERE id = ?',
    ),
    deferCallback: db.prepare<[number, string]>(
      `UPDATE sms_callbacks SET lease_until = ? WHERE uid = ? AND state = 'pending'`,
    ),
    recordCallbackAttempt: db.prepare<[string, number | null, string | null, number | null, string]>(`
      UPDATE sms_callbacks SET state = ?, attempts = attempts + 1, last_status_code = ?, last_error = ?,
        next_attempt_at = ?, lease_owner = NULL, lease_until = NULL
      WHERE uid = ? AND state = 'pending'`),
    overdue: readRows(
      db.prepare<[number, number], unknown[]>(`
        SELECT ${MESSAGE_COLUMNS} FROM sms_messages WHERE state = 'submitted' AND updated_at < ? ORDER BY updated_at, id LIMIT +?`),
      toMessageRow,
    ),
    purgeable: db.prepare<[number, number], { id: number }>(`
      SELECT m.id FROM sms_messages m
      WHERE ${PURGEABLE_SQL} AND m.updated_at < ?
        AND NOT EXISTS (SELECT 1 FROM sms_callbacks c WHERE c.message_id = m.id AND c.state = 'pending')
      ORDER BY m.updated_at, m.id LIMIT +?`),
    deleteCarrierIds: db.prepare<[number]>('DELETE FROM sms_carrier_ids WHERE message_id = ?'),
    deleteCallback: db.prepare<[number]>('DELETE FROM sms_callbacks WHERE message_id = ?'),
    deleteMessage: db.prepare<[number]>('DELETE FROM sms_messages WHERE id = ?'),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

/**
 * Storage in one SQLite file: durable across restarts and crashes, for one process.
 *
 * Opens `path` at construction (or takes the host's `database` handle) and creates its
 * tables on first use (`ready()`). Every write runs in a transaction of its own (a
 * savepoint), and the writes asked for in the same turn of the event loop share one
 * commit (see `sqlite-group-commit.ts`), so a burst of requests and worker steps pays for
 * one disk sync rather than one each. Several processes may open the
 * same file (SQLite locks it), but claims are only as fast as one writer; for many
 * instances use `sms-outbox/postgres`.
 */
export class SqliteStorage implements Storage {
  private readonly db: Database.Database;
  private readonly ownsDatabase: boolean;
  private readonly synchronous: 'FULL' | 'NORMAL';
  private readonly busyTimeoutMs: number;
  private readyPromise: Promise<void> | undefined;
  private statements: Statements | undefined;
  private readonly commits: GroupCommit;
  private closed = false;

  /** Opens the file (or takes the handle); throws on a bad option. */
  constructor(options: SqliteStorageOptions) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError('SqliteStorage: options must be an object with `path` or `database`');
    }
    assertKnownKeys('SqliteStorage', options, KNOWN_OPTIONS);
    const { path, database, synchronous = 'FULL', busyTimeoutMs = 5_000 } = options;
    if ((path === undefined) === (database === undefined)) {
      throw new TypeError('SqliteStorage: give exactly one of `path` (a file) or `database` (an open handle)');
    }
    if (path !== undefined && (typeof path !== 'string' || path === '')) {
      throw new TypeError('SqliteStorage: `path` must be a non-empty string');
    }
    if (synchronous !== 'FULL' && synchronous !== 'NORMAL') {
      throw new TypeError(`SqliteStorage: \`synchronous\` must be 'FULL' or 'NORMAL', got ${String(synchronous)}`);
    }
    assertNumber('SqliteStorage: `busyTimeoutMs`', busyTimeoutMs, 0);
    this.synchronous = synchronous;
    this.busyTimeoutMs = busyTimeoutMs;
    this.ownsDatabase = database === undefined;
    if (path !== undefined) createFolderOf(path);
    this.db = database ?? new BetterSqlite3(path!);
    this.commits = new GroupCommit(this.db);
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

  /** Stores every message as `queued` (leased under `lease`), or none; shares a commit with concurrent calls. */
  async insertMessages(messages: readonly NewMessage[], lease?: InsertLease): Promise<void> {
    const s = await this.prepared();
    if (messages.length === 0) return;
    // Copied now: the caller may reuse its objects before the group is written.
    const batch = messages.map((message) => ({ ...message }));
    const leased = lease === undefined ? undefined : { owner: lease.owner, until: lease.until };
    await this.commits.run(() => {
      for (const m of batch) insertMessage(s, m, leased);
    });
  }

  /** Leases up to `limit` due, unleased `queued` messages, oldest first. */
  async claimMessages(options: ClaimOptions): Promise<MessageRecord[]> {
    const s = await this.prepared();
    return this.commits.run(() => {
        // Ids first, then each row by id: measured faster than `SELECT *` of the due rows
        // or one `UPDATE ... RETURNING *` (the scan passes every leased message ahead).
        const rows = s.dueMessages.all({ now: options.now, limit: Math.max(0, options.limit) });
        const leaseUntil = options.now + options.leaseMs;
        return rows.map(({ id }) => {
          s.leaseMessage.run(options.owner, leaseUntil, id);
          // No report to read: one is created only in the step that makes its message
          // terminal (terminate), and a terminal message is never queued again, so a
          // claimed (queued) message has none.
          const row = s.messageById.get(id)!;
          return messageRecord(row, partsOf(row), null);
        });
      });
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
        // The record as it would read back: markSubmitted changed only the state, the parts,
        // the time and the lease (not part of a record), and a queued message has no report
        // (see claimMessages).
        const message = messageRecord({ ...row, state: 'submitted', updated_at: now, parts: partsJson }, parts, null);
        return { kind: 'submitted', transition: { message, previousState: 'queued' } };
      });
  }

  /** Gives a `queued` message back for another attempt at `nextAttemptAt`. */
  async reschedule(ref: string, nextAttemptAt: number, error: string, now: number): Promise<void> {
    const s = await this.prepared();
    await this.commits.run(() => s.reschedule.run(error, nextAttemptAt, now, ref));
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
      return row === undefined || row.principal_id !== principalId ? null : this.load(s, row);
    })();
  }

  /** The principal's messages with `externalId`, newest first, at most `limit`. */
  async findByExternalId(principalId: string, externalId: string, limit: number): Promise<MessageRecord[]> {
    const s = await this.prepared();
    return this.db.transaction(() =>
      s.byExternalId.all(principalId, externalId, Math.max(0, limit)).map((row) => this.load(s, row)),
    )();
  }

  /** Leases up to `limit` due pending delivery reports, oldest due first. */
  async claimCallbacks(options: ClaimOptions): Promise<DueCallback[]> {
    const s = await this.prepared();
    return this.commits.run(() => {
        const rows = s.dueCallbacks.all({ now: options.now, limit: Math.max(0, options.limit) });
        const leaseUntil = options.now + options.leaseMs;
        return rows.map((callback): DueCallback => {
          s.leaseCallback.run(options.owner, leaseUntil, callback.id);
          return { uid: callback.uid, attempts: callback.attempts, message: this.loadById(s, callback.message_id) };
        });
      });
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

  /** Deletes up to `limit` terminal messages changed before `before` without a pending report. */
  async purge(before: number, limit: number): Promise<number> {
    const s = await this.prepared();
    return this.commits.run(() => {
        const ids = s.purgeable.all(before, Math.max(0, limit));
        for (const { id } of ids) {
          s.deleteCarrierIds.run(id);
          s.deleteCallback.run(id);
          s.deleteMessage.run(id);
        }
        return ids.length;
      });
  }

  private async prepared(): Promise<Statements> {
    await this.ready();
    if (this.closed) throw new Error('SqliteStorage: closed');
    return this.statements!;
  }

  private migrate(): void {
    const db = this.db;
    // journal_mode cannot change inside a transaction; an in-memory database stays 'memory'.
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${this.synchronous}`);
    db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    // The version is read inside the write lock, so two processes opening a new file at
    // once cannot both run the same migration.
    db.transaction(() => {
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version > MIGRATIONS.length) {
        throw new Error(
          `SqliteStorage: the database schema is version ${version}, newer than this sms-outbox knows (${MIGRATIONS.length}); upgrade sms-outbox`,
        );
      }
      for (let next = version; next < MIGRATIONS.length; next++) db.exec(MIGRATIONS[next]!);
      db.pragma(`user_version = ${MIGRATIONS.length}`);
    }).immediate();
    const s = prepareStatements(db);
    this.statements = s;
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

  private loadById(s: Statements, id: number): MessageRecord {
    return this.load(s, s.messageById.get(id)!);
  }

  private load(s: Statements, row: MessageRow): MessageRecord {
    const callback = s.callbackOfMessage.get(row.id);
    return messageRecord(
      row,
      partsOf(row),
      callback === undefined
        ? null
        : {
            state: callback.state,
            attempts: callback.attempts,
            lastStatusCode: callback.last_status_code,
            lastError: callback.last_error,
            nextAttemptAt: callback.next_attempt_at,
          },
    );
  }
}

/**
 * The statements the PostgreSQL record store writes itself rather than take from the shared
 * SQL layer, because PostgreSQL does them in one round trip: a batch of compare-and-set
 * writes with their carrier ids and refunds, and a guarded insert. Each is one statement of
 * fixed text over its rows as one JSON text and one text of their documents, so it is parsed
 * and planned once per connection (a named prepared statement) however many rows it
 * carries, and is atomic on its own.
 *
 * @module
 */
import type { InsertGuard, MessageRow, MessageWrite } from '../record-store.js';
import { ROW_COLUMNS, rowValues, WRITTEN_COLUMNS } from '../sql/rows.js';
import type { SqlTables } from '../sql/schema.js';

/** The row columns a write or an insert sets, with each one's type: {@link WRITTEN_COLUMNS} but `data`, in its order. */
const ROW_FIELDS = [
  ['principal_id', 'text'],
  ['external_id', 'text'],
  ['created_at', 'bigint'],
  ['valid_until', 'bigint'],
  ['accepted_at', 'bigint'],
  ['queue', 'smallint'],
  ['order_key', 'float8'],
  ['due_at', 'bigint'],
  ['lease_owner', 'text'],
  ['lease_until', 'bigint'],
  ['report_due_at', 'bigint'],
  ['timer', 'text'],
  ['timer_at', 'bigint'],
] as const;

// `rowValues` gives the values in WRITTEN_COLUMNS' order: the fields are read from it by position.
if (ROW_FIELDS.map(([column]) => column).join() !== WRITTEN_COLUMNS.slice(0, -1).join() || WRITTEN_COLUMNS.at(-1) !== 'data') {
  throw new Error('ROW_FIELDS must be WRITTEN_COLUMNS but data, in order');
}

/** The columns a write or an insert sets, `data` last. */
const COLUMNS = WRITTEN_COLUMNS.join(', ');

/**
 * Separates the rows' JSON texts in the text parameter that carries them: JSON text never
 * holds a raw control character (`JSON.stringify` escapes them), so it never holds this.
 * The documents travel beside the rows' fields rather than in them, where each of their
 * many quotes would be escaped on the way in and unescaped on the way out.
 */
const DATA_SEPARATOR = '\x1e';

/** The fields of a batch's row, in their place in its JSON array (see {@link batchRows}). */
const BATCH_FIELDS = [['ref', 'text'], ['expected', 'bigint'], ['refund', 'bigint'], ...ROW_FIELDS] as const;

/**
 * A batch's rows as a relation named `alias`: `$from` is their fields, `$from+1` their
 * documents, each row's joined by {@link DATA_SEPARATOR}, zipped by position and numbered
 * `n`. A row's fields are a JSON array: `ref`, `expected`, `refund`, the {@link ROW_FIELDS},
 * then its carrier ids to store as `carrier_ids` (a JSON array). JSON texts rather than an
 * array per column: the driver writes an array literal in JavaScript, escaping element by
 * element, where `JSON.stringify` is native. Arrays read as `json` by position: no key to
 * write per field, and measured cheaper for PostgreSQL than the arrays per column,
 * `json_to_recordset`'s objects, and `jsonb` (whose numbers go through `numeric` both
 * ways). Both split by `unnest`, which the planner counts as few rows (a function over a
 * JSON array counts as a hundred, and a write's join then reads the whole table rather than
 * look each ref up).
 */
function batchRows(from: number, alias: string): string {
  const fields = BATCH_FIELDS.map(([field, type], i) => (type === 'text' ? `e->>${i} AS ${field}` : `(e->>${i})::${type} AS ${field}`));
  return `(SELECT ${fields.join(', ')}, e->${BATCH_FIELDS.length} AS carrier_ids, b.data, b.n
          FROM ROWS FROM (unnest(string_to_array($${from}::text, E'\\x1e')::json[]), unnest(string_to_array($${from + 1}::text, E'\\x1e')))
          WITH ORDINALITY AS b(e, data, n)) AS ${alias}`;
}

/**
 * The fields of one row for {@link batchRows}, from its `rowValues`, in {@link BATCH_FIELDS}'
 * order, then its carrier ids. One array literal: no array built and copied per row.
 */
function rowFields(ref: string, expected: number, refund: number, v: readonly unknown[], carrierIds: readonly string[]): unknown[] {
  return [ref, expected, refund, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], carrierIds];
}

// rowFields copies the values by position: one for each of ROW_FIELDS.
if (rowFields('', 0, 0, [], []).length !== BATCH_FIELDS.length + 1) throw new Error('rowFields must give every field of BATCH_FIELDS');

/**
 * The two parameters of `rows` for {@link batchRows}: the fields' JSON and the documents.
 * Row `i` is at version `expected(i)`, refunds `refund(i)` and stores carrier ids `carrierIds(i)`.
 */
function batchParams(
  rows: readonly MessageRow[],
  expected: (i: number) => number,
  refund: (i: number) => number,
  carrierIds: (i: number) => readonly string[],
): [string, string] {
  const fields = new Array<string>(rows.length);
  const documents = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const values = rowValues(row);
    fields[i] = JSON.stringify(rowFields(row.record.ref, expected(i), refund(i), values, carrierIds(i)));
    documents[i] = values[ROW_FIELDS.length] as string;
  }
  return [fields.join(DATA_SEPARATOR), documents.join(DATA_SEPARATOR)];
}

/** A write, with the carrier ids it adds when the ledger names them (else every id of its row, those stored already skipped by the insert). */
type Write = MessageWrite & { addedCarrierIds?: readonly string[] };

/** How many of a class's first rows the head is looked for among; a bound on what an insert reads. */
const HEAD_WINDOW = 1000;

/** A row a submit claim at `$3` may take: due, not leased, still valid. */
const CLAIMABLE = 'due_at <= $3 AND (lease_until IS NULL OR lease_until <= $3) AND (valid_until IS NULL OR valid_until > $3)';

/** The statements of the store over `t`. */
export function postgresStatements(t: SqlTables) {
  const returned = ROW_COLUMNS.split(', ').map((column) => `m.${column}`).join(', ');
  return {
    /**
     * `queueEnds` of several classes and principals at once: element `i` of `$1` (class),
     * `$2` (principal) and `$3` (now), answered in order. Each end is an explicit walk of an
     * index from one side: a `MAX()` over a table without statistics yet (a new schema) is
     * planned as a read of every entry of the principal, at every insert. The head is looked
     * for among the first {@link HEAD_WINDOW} of the class only: past a window of leased
     * messages (a worker's, or a carrier that stopped) a newcomer goes after the window.
     */
    queueEnds: `SELECT
        (SELECT order_key FROM ${t.messages} m WHERE m.queue = q.queue AND m.principal_id = q.principal_id ORDER BY order_key DESC LIMIT 1) AS principal_last,
        (SELECT w.order_key FROM (
            SELECT order_key, due_at <= q.now AND (lease_until IS NULL OR lease_until <= q.now) AND (valid_until IS NULL OR valid_until > q.now) AS claimable,
              row_number() OVER (ORDER BY order_key, seq) AS n
            FROM ${t.messages} m WHERE m.queue = q.queue ORDER BY order_key, seq LIMIT ${HEAD_WINDOW}) w
          WHERE w.claimable OR w.n = ${HEAD_WINDOW} LIMIT 1) AS head,
        (SELECT order_key FROM ${t.messages} m WHERE m.queue = q.queue ORDER BY order_key DESC LIMIT 1) AS last
      FROM unnest($1::smallint[], $2::text[], $3::bigint[]) WITH ORDINALITY AS q(queue, principal_id, now, i) ORDER BY q.i`,
    /** The rows of the refs `$1`. */
    rowsOf: `SELECT ${ROW_COLUMNS} FROM ${t.messages} WHERE ref = ANY($1::text[])`,
    /**
     * `findByCarrierId` of several lookups at once: lookup `$1[k]` names id `$3[k]` as its
     * `$2[k]`-th spelling. Per lookup, the row its first spelling that any row has names; of
     * the rows one id names (a carrier reused it), the newest.
     */
    rowsByCarrierId: `SELECT DISTINCT ON (q.lookup) q.lookup, ${returned}
      FROM unnest($1::int[], $2::int[], $3::text[]) AS q(lookup, spelling, carrier_id)
      JOIN ${t.carrierIds} c ON c.carrier_id = q.carrier_id JOIN ${t.messages} m ON m.ref = c.ref
      ORDER BY q.lookup, q.spelling, m.seq DESC`,
    /**
     * A submit claim in one statement: up to `$4` claimable rows in the queue's order,
     * skipping those another claim holds, leased to `$1` until `$2` at `$3`.
     */
    claimMessages: `WITH c AS (
        SELECT seq FROM ${t.messages} WHERE queue IS NOT NULL AND ${CLAIMABLE}
          ORDER BY queue, order_key, seq LIMIT $4 FOR UPDATE SKIP LOCKED)
      UPDATE ${t.messages} m SET lease_owner = $1, lease_until = $2, version = m.version + 1 FROM c WHERE m.seq = c.seq
      RETURNING ${returned}`,
    /** A report claim in one statement: up to `$3` due reports at `$2`, moved to `$1` (their lease); each with the due time it had. */
    claimReports: `WITH c AS (
        SELECT seq, report_due_at AS was_due FROM ${t.messages} WHERE report_due_at <= $2
          ORDER BY report_due_at, order_key, seq LIMIT $3 FOR UPDATE SKIP LOCKED)
      UPDATE ${t.messages} m SET report_due_at = $1, version = m.version + 1 FROM c WHERE m.seq = c.seq
      RETURNING ${returned}, c.was_due`,
    /**
     * Applies each write whose row is still at its expected version; returns the refs
     * applied, as one JSON array (`null` for none): one row for the driver to read, not one per write. The carrier ids and the refunds follow only the applied writes. Refs must be
     * distinct: of two writes of one row, `UPDATE ... FROM` would apply one, not say which.
     */
    write: `WITH done AS (
        UPDATE ${t.messages} m SET ${COLUMNS.split(', ').map((column) => `${column} = w.${column}`).join(', ')}, version = w.expected + 1
          FROM ${batchRows(1, 'w')} WHERE m.ref = w.ref AND m.version = w.expected
          RETURNING m.ref, w.principal_id, w.refund, w.carrier_ids),
      ids AS (
        INSERT INTO ${t.carrierIds} (carrier_id, ref)
          SELECT a.id, done.ref FROM done CROSS JOIN LATERAL json_array_elements_text(done.carrier_ids) AS a(id)
          ON CONFLICT DO NOTHING),
      refunds AS (
        INSERT INTO ${t.credit} AS c (principal_id, balance)
          SELECT principal_id, sum(refund)::bigint FROM done WHERE refund > 0 GROUP BY principal_id
          ON CONFLICT (principal_id) DO UPDATE SET balance = c.balance + EXCLUDED.balance)
      SELECT json_agg(ref) AS refs FROM done`,
    /**
     * Inserts the rows with their carrier ids, unless the idempotency key is held by a live
     * record or the balance is short: then nothing. Each data-modifying part reads the
     * answer of the one before it, so they run in that order. Guards with both a key and a
     * charge are not for this statement: a key put and then a short balance would keep the
     * key (the store runs those in a transaction).
     */
    insert: `WITH idem AS (
        INSERT INTO ${t.idempotency} AS i (principal_id, idem_key, body_hash, status, body, created_at, expires_at)
          SELECT $3::text, $4::text, $5::text, $6::int, $7::text, $8::bigint, $9::bigint
          WHERE $3::text IS NOT NULL
          ON CONFLICT (principal_id, idem_key) DO UPDATE SET body_hash = EXCLUDED.body_hash, status = EXCLUDED.status,
            body = EXCLUDED.body, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
            WHERE i.expires_at <= EXCLUDED.created_at
          RETURNING 1),
      key_free AS (SELECT $3::text IS NULL OR EXISTS (SELECT 1 FROM idem) AS ok),
      taken AS (
        UPDATE ${t.credit} SET balance = balance - $11::bigint
          WHERE principal_id = $10::text AND $11::bigint > 0 AND balance >= $11::bigint
          RETURNING 1),
      paid AS (SELECT $10::text IS NULL OR $11::bigint <= 0 OR EXISTS (SELECT 1 FROM taken) AS ok),
      go AS (SELECT (SELECT ok FROM key_free) AND (SELECT ok FROM paid) AS ok),
      r AS (SELECT * FROM ${batchRows(1, 'q')}),
      inserted AS (
        INSERT INTO ${t.messages} (ref, version, ${COLUMNS})
          SELECT r.ref, 0, ${COLUMNS.split(', ').map((column) => `r.${column}`).join(', ')}
          FROM r WHERE (SELECT ok FROM go) ORDER BY r.n
          RETURNING 1),
      ids AS (
        INSERT INTO ${t.carrierIds} (carrier_id, ref)
          SELECT a.id, r.ref FROM r CROSS JOIN LATERAL json_array_elements_text(r.carrier_ids) AS a(id) WHERE (SELECT ok FROM go)
          ON CONFLICT DO NOTHING)
      SELECT (SELECT ok FROM key_free) AS key_free, (SELECT ok FROM go) AS stored,
        (SELECT balance FROM ${t.credit} WHERE principal_id = $10::text) AS balance, (SELECT count(*) FROM inserted) AS inserted`,
  };
}

/** The parameters of the write statement for `writes` (distinct refs). */
export function writeParams(writes: readonly Write[]): unknown[] {
  return batchParams(
    writes.map((write) => write.row),
    (i) => writes[i]!.expectedVersion,
    (i) => writes[i]!.refund ?? 0,
    (i) => writes[i]!.addedCarrierIds ?? writes[i]!.row.carrierIds,
  );
}

/** The parameters of the insert statement for `rows` under `guard` (a key, or a charge, or neither). */
export function insertParams(rows: readonly MessageRow[], guard: InsertGuard | undefined): unknown[] {
  const key = guard?.idempotency;
  return [
    ...batchParams(rows, () => 0, () => 0, (i) => rows[i]!.carrierIds),
    key?.principalId ?? null,
    key?.key ?? null,
    key?.bodyHash ?? null,
    key?.status ?? null,
    key?.body ?? null,
    key?.createdAt ?? null,
    key?.expiresAt ?? null,
    guard?.credit?.principalId ?? null,
    guard?.credit?.units ?? 0,
  ];
}

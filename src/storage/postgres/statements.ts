/**
 * The statements the PostgreSQL record store writes itself rather than take from the shared
 * SQL layer, because PostgreSQL does them in one round trip: a batch of compare-and-set
 * writes with their carrier ids and refunds, and a guarded insert (by a key, a charge or one
 * counter). Each is one statement of
 * fixed text over arrays (`unnest`), so it is parsed and planned once per connection (a
 * named prepared statement) however many rows it carries, and is atomic on its own.
 *
 * @module
 */
import type { CounterGuard, InsertGuard, MessageRow, MessageWrite } from '../record-store.js';
import { ROW_COLUMNS, rowValues, sideCarrierIds, WRITTEN_COLUMNS } from '../sql/rows.js';
import type { SqlTables } from '../sql/schema.js';

/** The array type of each column a write or an insert sets from arrays, where it is not `text`. */
const ARRAY_TYPES: Partial<Record<(typeof WRITTEN_COLUMNS)[number], string>> = {
  created_at: 'bigint',
  valid_until: 'bigint',
  accepted_at: 'bigint',
  queue: 'smallint',
  order_key: 'float8',
  due_at: 'bigint',
  lease_until: 'bigint',
  report_due_at: 'bigint',
  timer_at: 'bigint',
};

const COLUMNS = WRITTEN_COLUMNS.join(', ');

/**
 * Separates the rows' JSON documents in the one text parameter that carries them: JSON text
 * never holds a raw control character (`JSON.stringify` escapes them), so it never holds this.
 * One text rather than a text array, because a driver escapes every quote of every element
 * of an array literal, and a document is mostly quotes.
 */
const DATA_SEPARATOR = '\x1e';

/** `unnest($from::type[], ...)` of the row arrays, numbered from `from`; the last (data) split from one text. */
function unnestRows(from: number): string {
  return WRITTEN_COLUMNS.map((column, i) =>
    column === 'data' ? `string_to_array($${from + i}::text, E'\\x1e')` : `$${from + i}::${ARRAY_TYPES[column] ?? 'text'}[]`,
  ).join(', ');
}

/** The row arrays of `rows`, in {@link WRITTEN_COLUMNS}' order (each row's values as every SQL store writes them). */
function rowArrays(rows: readonly MessageRow[]): unknown[] {
  const arrays: unknown[][] = WRITTEN_COLUMNS.map(() => new Array<unknown>(rows.length));
  for (let i = 0; i < rows.length; i++) {
    const values = rowValues(rows[i]!);
    for (let column = 0; column < values.length; column++) arrays[column]![i] = values[column];
  }
  return [...arrays.slice(0, -1), arrays[arrays.length - 1]!.join(DATA_SEPARATOR)];
}

/** A write, with the carrier ids it adds when the ledger names them (else every id of its row, those stored already skipped by the insert); the first is in the row's own column. */
type Write = MessageWrite & { addedCarrierIds?: readonly string[] };

/** How many of a class's first rows the head is looked for among; a bound on what an insert reads. */
const HEAD_WINDOW = 1000;

/** A row a submit claim at `$3` may take: due, not leased, still valid. */
const CLAIMABLE = 'due_at <= $3 AND (lease_until IS NULL OR lease_until <= $3) AND (valid_until IS NULL OR valid_until > $3)';

/**
 * The parts `inserted` and `ids` of a `WITH` that inserts the rows of `$1` to `$n+1` and the
 * carrier ids of `$n+2` and `$n+3` into tables `t` when `condition` holds.
 */
function insertRows(t: SqlTables, condition: string): string {
  const n = WRITTEN_COLUMNS.length;
  return `inserted AS (
        INSERT INTO ${t.messages} (ref, version, ${COLUMNS})
          SELECT r.ref, 0, ${WRITTEN_COLUMNS.map((column) => `r.${column}`).join(', ')}
          FROM unnest($1::text[], ${unnestRows(2)}) WITH ORDINALITY AS r(ref, ${COLUMNS}, n)
          WHERE ${condition} ORDER BY r.n
          RETURNING 1),
      ids AS (
        INSERT INTO ${t.carrierIds} (carrier_id, ref)
          SELECT a.id, a.ref FROM unnest($${n + 2}::text[], $${n + 3}::text[]) AS a(ref, id) WHERE ${condition}
          ON CONFLICT DO NOTHING)`;
}

/** The statements of the store over `t`. */
export function postgresStatements(t: SqlTables) {
  const n = WRITTEN_COLUMNS.length;
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
     * `$2[k]`-th spelling. Per lookup, the row its first spelling that any row has names (in
     * the row's own column, or in the side table); of the rows one id names (a carrier reused
     * it), the newest.
     */
    rowsByCarrierId: `SELECT DISTINCT ON (f.lookup) f.lookup, ${ROW_COLUMNS.split(', ').map((column) => `f.${column}`).join(', ')} FROM (
        SELECT q.lookup, q.spelling, ${returned}
          FROM unnest($1::int[], $2::int[], $3::text[]) AS q(lookup, spelling, carrier_id)
          JOIN ${t.messages} m ON m.carrier_id = q.carrier_id
        UNION ALL
        SELECT q.lookup, q.spelling, ${returned}
          FROM unnest($1::int[], $2::int[], $3::text[]) AS q(lookup, spelling, carrier_id)
          JOIN ${t.carrierIds} c ON c.carrier_id = q.carrier_id JOIN ${t.messages} m ON m.ref = c.ref) f
      ORDER BY f.lookup, f.spelling, f.seq DESC`,
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
     * applied, as one JSON array (`null` for none): one row for the driver to read, not one
     * per write. The carrier ids and the refunds follow only the applied writes. The writes
     * that end their message (`$${n + 6}`: their place among those, from 1; 0 for the others;
     * `$${n + 7}` of them) take their report keys from the head row, whose lock (taken only
     * when some write ends a message) is held until the statement commits: keys increase in
     * commit order (sql/report-log.ts). Refs must be distinct: of two writes of one row,
     * `UPDATE ... FROM` would apply one, not say which.
     */
    write: `WITH head AS (
        UPDATE ${t.reportHead} h SET seq = h.seq + $${n + 7}::int WHERE h.id = 1 AND $${n + 7}::int > 0
          RETURNING h.seq - $${n + 7}::int AS base),
      w AS (
        SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], ${unnestRows(4)}, $${n + 6}::int[])
          AS w(ref, expected, refund, ${COLUMNS}, reported)),
      done AS (
        UPDATE ${t.messages} m SET ${WRITTEN_COLUMNS.map((column) => `${column} = w.${column}`).join(', ')}, version = w.expected + 1,
            report_seq = CASE WHEN w.reported > 0 THEN (SELECT base FROM head) + w.reported ELSE m.report_seq END
          FROM w WHERE m.ref = w.ref AND m.version = w.expected
          RETURNING m.ref, w.principal_id, w.refund),
      ids AS (
        INSERT INTO ${t.carrierIds} (carrier_id, ref)
          SELECT a.id, a.ref FROM unnest($${n + 4}::text[], $${n + 5}::text[]) AS a(ref, id) JOIN done ON done.ref = a.ref
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
          SELECT $${n + 4}::text, $${n + 5}::text, $${n + 6}::text, $${n + 7}::int, $${n + 8}::text, $${n + 9}::bigint, $${n + 10}::bigint
          WHERE $${n + 4}::text IS NOT NULL
          ON CONFLICT (principal_id, idem_key) DO UPDATE SET body_hash = EXCLUDED.body_hash, status = EXCLUDED.status,
            body = EXCLUDED.body, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
            WHERE i.expires_at <= EXCLUDED.created_at
          RETURNING 1),
      key_free AS (SELECT $${n + 4}::text IS NULL OR EXISTS (SELECT 1 FROM idem) AS ok),
      taken AS (
        UPDATE ${t.credit} SET balance = balance - $${n + 12}::bigint
          WHERE principal_id = $${n + 11}::text AND $${n + 12}::bigint > 0 AND balance >= $${n + 12}::bigint
          RETURNING 1),
      paid AS (SELECT $${n + 11}::text IS NULL OR $${n + 12}::bigint <= 0 OR EXISTS (SELECT 1 FROM taken) AS ok),
      go AS (SELECT (SELECT ok FROM key_free) AND (SELECT ok FROM paid) AS ok),
      ${insertRows(t, '(SELECT ok FROM go)')}
      SELECT (SELECT ok FROM key_free) AS key_free, (SELECT ok FROM go) AS stored,
        (SELECT balance FROM ${t.credit} WHERE principal_id = $${n + 11}::text) AS balance, (SELECT count(*) FROM inserted) AS inserted`,
    /**
     * Inserts the rows with their carrier ids and adds `$n+6` to the counter of principal
     * `$n+4` and period `$n+5`, unless that would take it past `$n+7`: then nothing. One
     * counter only: of two, one statement could add to one and not the other (the store runs
     * those in a transaction). The counter's row is created, or locked and read at its latest
     * version, by the upsert, so two such inserts at once wait for each other.
     */
    insertCounted: `WITH counted AS (
        INSERT INTO ${t.counters} AS k (principal_id, period, units)
          SELECT $${n + 4}::text, $${n + 5}::text, $${n + 6}::bigint WHERE $${n + 6}::bigint <= $${n + 7}::bigint
          ON CONFLICT (principal_id, period) DO UPDATE SET units = k.units + EXCLUDED.units
            WHERE k.units + EXCLUDED.units <= $${n + 7}::bigint
          RETURNING k.units),
      ${insertRows(t, 'EXISTS (SELECT 1 FROM counted)')}
      SELECT (SELECT units FROM counted) AS counted, (SELECT count(*) FROM inserted) AS inserted`,
  };
}

/** The parameters of the write statement for `writes` (distinct refs). */
export function writeParams(writes: readonly Write[]): unknown[] {
  const added = writes.flatMap((write) => sideCarrierIds(write.row, write.addedCarrierIds).map((id) => [write.row.record.ref, id] as const));
  let reported = 0;
  return [
    writes.map((write) => write.row.record.ref),
    writes.map((write) => write.expectedVersion),
    writes.map((write) => write.refund ?? 0),
    ...rowArrays(writes.map((write) => write.row)),
    added.map(([ref]) => ref),
    added.map(([, id]) => id),
    writes.map((write) => (write.reported === true ? ++reported : 0)),
    reported,
  ];
}

/** The parameters `$1` to `$n+3` of an insert ({@link insertRows}): the refs, the row arrays and the side table's carrier ids. */
function rowParams(rows: readonly MessageRow[]): unknown[] {
  const ids = rows.flatMap((row) => sideCarrierIds(row).map((id) => [row.record.ref, id] as const));
  return [rows.map((row) => row.record.ref), ...rowArrays(rows), ids.map(([ref]) => ref), ids.map(([, id]) => id)];
}

/** The parameters of the insert statement for `rows` under `guard` (a key, or a charge, or neither). */
export function insertParams(rows: readonly MessageRow[], guard: InsertGuard | undefined): unknown[] {
  const key = guard?.idempotency;
  return [
    ...rowParams(rows),
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

/** The parameters of the counted insert statement for `rows` adding to `counter`. */
export function insertCountedParams(rows: readonly MessageRow[], counter: CounterGuard): unknown[] {
  return [...rowParams(rows), counter.principalId, counter.period, counter.units, counter.limit];
}

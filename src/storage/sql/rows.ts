/**
 * A `MessageRow` to and from the columns of the messages table (schema.ts): the fields the
 * store searches and orders by each in a column, and the record, book and carrier ids in the
 * JSON column `data`, kept as given.
 *
 * @module
 */
import type { IdempotencyRecord } from '../idempotency-record.js';
import type { MessageRecord } from '../message-record.js';
import type { MessageRow, RowBook, Timer } from '../record-store.js';

/** The columns a write sets, in the order of {@link rowValues}. */
export const WRITTEN_COLUMNS = [
  'principal_id',
  'external_id',
  'created_at',
  'valid_until',
  'accepted_at',
  'queue',
  'order_key',
  'due_at',
  'lease_owner',
  'lease_until',
  'report_due_at',
  'timer',
  'timer_at',
  'data',
] as const;

/** The columns an insert sets: `ref`, `version`, then {@link WRITTEN_COLUMNS}. */
export const INSERTED_COLUMNS = ['ref', 'version', ...WRITTEN_COLUMNS].join(', ');

/** The columns a read selects, for {@link fromColumns}. */
export const ROW_COLUMNS = 'seq, version, queue, order_key, due_at, lease_owner, lease_until, report_due_at, timer, timer_at, data';

/** What `data` holds. */
interface RowData {
  record: MessageRecord;
  book: RowBook;
  carrierIds: readonly string[];
}

/** The values of {@link WRITTEN_COLUMNS} for `row`. */
export function rowValues(row: MessageRow): unknown[] {
  const { record } = row;
  const data: RowData = { record: row.record, book: row.book, carrierIds: row.carrierIds };
  return [
    record.principalId,
    record.externalId,
    record.createdAt,
    record.validUntil ?? null,
    record.sendAt ?? record.createdAt,
    row.queue,
    row.orderKey,
    row.dueAt,
    row.leaseOwner,
    row.leaseUntil,
    row.reportDueAt,
    row.timer,
    row.timerAt,
    JSON.stringify(data),
  ];
}

/** A number column (drivers give 64-bit integers and aggregates as numbers or strings). */
export function num(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

/** A nullable number column. */
export function numOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : num(value);
}

/** A JSON column, as the driver gives it: text, a buffer, or already parsed. */
function parsed<T>(value: unknown): T {
  if (typeof value === 'string') return JSON.parse(value) as T;
  if (value instanceof Uint8Array) return JSON.parse(Buffer.from(value).toString('utf8')) as T;
  return value as T;
}

/** The row selected with {@link ROW_COLUMNS}. */
export function fromColumns(columns: Record<string, unknown>): MessageRow {
  const data = parsed<RowData>(columns.data);
  return {
    record: data.record,
    book: data.book,
    carrierIds: data.carrierIds,
    version: num(columns.version),
    seq: num(columns.seq),
    queue: numOrNull(columns.queue),
    orderKey: num(columns.order_key),
    dueAt: num(columns.due_at),
    leaseOwner: (columns.lease_owner as string | null) ?? null,
    leaseUntil: numOrNull(columns.lease_until),
    reportDueAt: numOrNull(columns.report_due_at),
    timer: (columns.timer as Timer | null) ?? null,
    timerAt: numOrNull(columns.timer_at),
  };
}

/** The idempotency columns, as the guard stores them and a lookup reads them. */
export const IDEMPOTENCY_COLUMNS = 'principal_id, idem_key, body_hash, status, body, created_at, expires_at';

/** The values of {@link IDEMPOTENCY_COLUMNS} for `record`. */
export function idempotencyValues(record: IdempotencyRecord): unknown[] {
  return [record.principalId, record.key, record.bodyHash, record.status, record.body, record.createdAt, record.expiresAt];
}

/** The record selected with {@link IDEMPOTENCY_COLUMNS}. */
export function toIdempotency(columns: Record<string, unknown>): IdempotencyRecord {
  return {
    principalId: String(columns.principal_id),
    key: String(columns.idem_key),
    bodyHash: String(columns.body_hash),
    status: num(columns.status),
    body: typeof columns.body === 'string' ? columns.body : Buffer.from(columns.body as Uint8Array).toString('utf8'),
    createdAt: num(columns.created_at),
    expiresAt: num(columns.expires_at),
  };
}

/** `(?, ?, ...)` with `count` placeholders. */
export function tuple(count: number): string {
  return `(${Array.from({ length: count }, () => '?').join(', ')})`;
}

/** `items` in slices of at most `size`, so that no statement outgrows a driver's or server's limits. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

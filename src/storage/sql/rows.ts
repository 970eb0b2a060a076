/**
 * A `MessageRow` to and from the columns of the messages table (schema.ts): the fields the
 * store searches and orders by each in a column (the record's recipient, state and profile
 * too, which the message list filters by, and its report's state if pending or failed, which
 * report recovery lists by, kept up to date by every write), and the record,
 * book and carrier ids in the column `data` (packed, see `PackedData`).
 *
 * @module
 */
import { openCallbackState } from '../callback-list.js';
import type { IdempotencyRecord } from '../idempotency-record.js';
import type { MessageRecord } from '../message-record.js';
import type { MessageRow, RowBook, Timer } from '../record-store.js';
import { partsFromStored, storedPart, type StoredPart } from '../stored-parts.js';

/**
 * The columns a write sets but `data`, each with its value read from a row, in the order of
 * {@link WRITTEN_COLUMNS} (the bits of {@link changedValues}' mask).
 */
const INDEXED_VALUES = [
  ['principal_id', (row) => row.record.principalId],
  ['external_id', (row) => row.record.externalId],
  ['created_at', (row) => row.record.createdAt],
  ['valid_until', (row) => row.record.validUntil ?? null],
  ['accepted_at', (row) => row.record.sendAt ?? row.record.createdAt],
  ['queue', (row) => row.queue],
  ['order_key', (row) => row.orderKey],
  ['due_at', (row) => row.dueAt],
  ['lease_owner', (row) => row.leaseOwner],
  ['lease_until', (row) => row.leaseUntil],
  ['report_due_at', (row) => row.reportDueAt],
  ['timer', (row) => row.timer],
  ['timer_at', (row) => row.timerAt],
  ['carrier_id', firstCarrierId],
  ['recipient', (row) => row.record.recipient],
  ['state', (row) => row.record.state],
  ['profile_code', (row) => row.record.profileCode],
  ['callback_state', (row) => openCallbackState(row.record)],
] as const satisfies readonly (readonly [column: string, value: (row: MessageRow) => unknown])[];

/** The columns a write sets, in the order of {@link rowValues}: the indexed ones, then `data`. */
export const WRITTEN_COLUMNS: readonly ((typeof INDEXED_VALUES)[number][0] | 'data')[] = [...INDEXED_VALUES.map(([column]) => column), 'data'];

/** The columns an insert sets: `ref`, `version`, then {@link WRITTEN_COLUMNS}. */
export const INSERTED_COLUMNS = ['ref', 'version', ...WRITTEN_COLUMNS].join(', ');

/** The columns a read selects, for {@link fromColumns}. */
export const ROW_COLUMNS =
  'seq, ref, version, principal_id, external_id, created_at, queue, order_key, due_at, lease_owner, lease_until, report_due_at, timer, timer_at, data';

/** What `data` held as first written: the row's parts as one object (still read). */
interface RowData {
  record: MessageRecord;
  book: RowBook;
  carrierIds: readonly string[];
}

/**
 * What `data` holds: the record's fields that have no column, the book and the carrier ids,
 * by position rather than by name, about half the text of {@link RowData} (a row's width is
 * what its inserts, updates and commits cost, on SQLite most of all). The fields a record
 * may lack ({@link OPTIONAL_FIELDS}) are in `optional`, by name, present as on the record; parts are as
 * stored-parts.ts keeps them. The first element, 2, tells it from {@link RowData}.
 */
type PackedData = [
  format: 2,
  endpoint: MessageRecord['endpoint'],
  profileCode: string,
  sender: string,
  recipient: string,
  text: string,
  messageType: number,
  reqType: number,
  recipientField: MessageRecord['recipientField'],
  referenceField: MessageRecord['referenceField'],
  smsCount: number,
  encoding: MessageRecord['encoding'],
  callbackUrl: string | null,
  callbackSecret: string | null,
  priority: MessageRecord['priority'],
  state: MessageRecord['state'],
  statusReason: MessageRecord['statusReason'],
  statusDescription: string | null,
  attempts: number,
  lastError: string | null,
  updatedAt: number,
  parts: StoredPart[],
  callback: MessageRecord['callback'],
  optional: Pick<MessageRecord, OptionalField>,
  weight: number,
  charge: RowBook['charge'],
  replacedCarrierIds: RowBook['replacedCarrierIds'],
  reportUid: string | null,
  carrierIds: readonly string[],
  // Only on a row reported part by part (RowBook), so other rows are no wider than before.
  reportPart?: number | null,
  partReports?: number[] | null,
];

/** The record's fields that may be absent, kept by name in `optional` (a new one is added here only). */
const OPTIONAL_FIELDS = [
  'sendAt', 'validUntil', 'traceparent', 'recipientAsSent', 'country', 'numberType', 'holdReason', 'reportFormat', 'reportPer', 'retainText', 'textSha256', 'recipientSha256',
] as const;
type OptionalField = (typeof OPTIONAL_FIELDS)[number];

/** The `data` text of `row` ({@link PackedData}). */
function packData(row: MessageRow): string {
  const r = row.record;
  const optional: Record<string, unknown> = {};
  for (const field of OPTIONAL_FIELDS) if (r[field] !== undefined) optional[field] = r[field];
  const parts = new Array<StoredPart>(r.parts.length);
  for (let i = 0; i < parts.length; i++) parts[i] = storedPart(r.parts[i]!);
  const b = row.book;
  const packed: PackedData = [
    2, r.endpoint, r.profileCode, r.sender, r.recipient, r.text, r.messageType, r.reqType, r.recipientField, r.referenceField,
    r.smsCount, r.encoding, r.callbackUrl, r.callbackSecret, r.priority, r.state, r.statusReason, r.statusDescription,
    r.attempts, r.lastError, r.updatedAt, parts, r.callback, optional as PackedData[23], b.weight, b.charge, b.replacedCarrierIds, b.reportUid,
    row.carrierIds,
  ];
  if (b.reportPart !== undefined || b.partReports !== undefined) packed.push(b.reportPart ?? null, b.partReports ?? null);
  return JSON.stringify(packed);
}

/** The record, book and carrier ids of a row from its columns and `data` (either form). */
function unpackData(columns: Record<string, unknown>): RowData {
  const data = parsed<PackedData | RowData>(columns.data);
  if (!Array.isArray(data)) return data;
  const [, endpoint, profileCode, sender, recipient, text, messageType, reqType, recipientField, referenceField, smsCount,
    encoding, callbackUrl, callbackSecret, priority, state, statusReason, statusDescription, attempts, lastError, updatedAt,
    parts, callback, optional, weight, charge, replacedCarrierIds, reportUid, carrierIds, reportPart, partReports] = data;
  const record: MessageRecord = {
    ref: String(columns.ref),
    principalId: String(columns.principal_id),
    endpoint, profileCode, sender, recipient, text, messageType, reqType,
    externalId: String(columns.external_id),
    recipientField, referenceField, smsCount, encoding, callbackUrl, callbackSecret,
    createdAt: num(columns.created_at),
    priority, state, statusReason, statusDescription, attempts, lastError, updatedAt,
    parts: partsFromStored(parts),
    callback,
  };
  Object.assign(record, optional);
  const book: RowBook = { weight, charge, replacedCarrierIds, reportUid };
  if (reportPart !== undefined && reportPart !== null) book.reportPart = reportPart;
  if (partReports !== undefined && partReports !== null) book.partReports = partReports;
  return { record, book, carrierIds };
}

/** The values of {@link WRITTEN_COLUMNS} for `row`. */
export function rowValues(row: MessageRow): unknown[] {
  const values = new Array<unknown>(WRITTEN_COLUMNS.length);
  for (let i = 0; i < INDEXED_VALUES.length; i++) values[i] = INDEXED_VALUES[i]![1](row);
  values[INDEXED_VALUES.length] = packData(row);
  return values;
}

/**
 * The carrier id kept in the row's own column, `null` before its first submission: the
 * first of `carrierIds`, which only ever grows at its end. The others are kept in the side
 * table ({@link sideCarrierIds}).
 */
export function firstCarrierId(row: MessageRow): string | null {
  return row.carrierIds[0] ?? null;
}

/** Of `ids` (carrier ids of `row`), those kept in the side table: all but the row's first. */
export function sideCarrierIds(row: MessageRow, ids: readonly string[] = row.carrierIds): readonly string[] {
  const first = row.carrierIds[0];
  return first === undefined || !ids.includes(first) ? ids : ids.filter((id) => id !== first);
}

/**
 * The columns of `row` whose values differ from `previous` (the stored row it replaces),
 * with their values: a database updates only the indexes of the columns an `UPDATE` sets.
 * `data` is among them unless the record, book and carrier ids are the very same objects.
 * `mask` has bit `i` set for the `i`-th of {@link WRITTEN_COLUMNS} among them, so a caller
 * can keep one statement text per set of columns.
 */
export function changedValues(row: MessageRow, previous: MessageRow): { mask: number; values: unknown[] } {
  let mask = 0;
  const values: unknown[] = [];
  for (let i = 0; i < INDEXED_VALUES.length; i++) {
    const value = INDEXED_VALUES[i]![1];
    const next = value(row);
    if (next !== value(previous)) {
      mask |= 1 << i;
      values.push(next);
    }
  }
  if (row.record !== previous.record || row.book !== previous.book || row.carrierIds !== previous.carrierIds) {
    mask |= 1 << INDEXED_VALUES.length;
    values.push(packData(row));
  }
  return { mask, values };
}

/** The names of the columns of `mask` ({@link changedValues}), in {@link WRITTEN_COLUMNS}' order. */
export function maskedColumns(mask: number): string[] {
  return WRITTEN_COLUMNS.filter((_, i) => (mask & (1 << i)) !== 0);
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
  const data = unpackData(columns);
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

const tuples: string[] = [];

/** `(?, ?, ...)` with `count` placeholders. */
export function tuple(count: number): string {
  return (tuples[count] ??= `(${Array.from({ length: count }, () => '?').join(', ')})`);
}

/** `items` in slices of at most `size`, so that no statement outgrows a driver's or server's limits. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

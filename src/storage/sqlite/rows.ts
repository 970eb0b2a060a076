/**
 * Rows to records, for the SQLite storage: the message columns the reads select, the rows
 * they yield, and the mapping of those rows to the contract's records. One column list and
 * one mapping serve every read, so a record looks the same whichever step returned it.
 * Also the other way: a new message as the parameters of the insert.
 *
 * @module
 */
import type Database from 'better-sqlite3';
import type { MessageState, StatusReason } from '../../lifecycle/states.js';
import { PRIORITY_RANK } from '../../lifecycle/fair-tags.js';
import { partsFromStored, unsubmittedPartsJson, type StoredPart } from '../stored-parts.js';
import type {
  CallbackState,
  Encoding,
  Endpoint,
  MessageRecord,
  NewMessage,
  PartRecord,
  RecipientField,
  ReferenceField,
} from '../contract.js';

/** A row of `sms_messages`, as {@link toMessageRow} reads it. */
export interface MessageRow {
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
  /** Unused since schema version 5, NULL: a queued message's lease is its queue row's (claims.ts). */
  lease_owner: string | null;
  /** Unused since schema version 5, NULL (as `lease_owner`). */
  lease_until: number | null;
  updated_at: number;
  /** The message's parts as JSON (see {@link partsOf}). */
  parts: string;
  /** Its class's rank (`PRIORITY_RANK`): 0 transactional, 1 bulk. */
  priority: number;
  /** Its fair tag in its class (claims.ts): with the rank and id, its queue row's key while queued. */
  fair_tag: number;
  /** When it is due, if it was sent for later (lifecycle/timing.ts). */
  send_at: number | null;
  /** Until when it may be submitted, if it has a validity period (lifecycle/timing.ts). */
  valid_until: number | null;
}

/** A row of `sms_callbacks` (a message's delivery report), read whole (`SELECT *`). */
export interface CallbackRow {
  id: number;
  uid: string;
  message_id: number;
  state: CallbackState['state'];
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: number | null;
}

/** The message columns the reads select, in {@link toMessageRow}'s order (the table's). */
export const MESSAGE_COLUMNS = `id, ref, principal_id, endpoint, profile_code, sender, recipient, text, message_type,
  req_type, external_id, recipient_field, reference_field, sms_count, encoding, callback_url, callback_secret,
  created_at, state, status_reason, status_description, attempts, last_error, next_attempt_at, lease_owner,
  lease_until, updated_at, parts, priority, fair_tag, send_at, valid_until`;

/** A message row from a raw (array) result of {@link MESSAGE_COLUMNS}. */
export function toMessageRow(r: unknown[]): MessageRow {
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
    priority: r[28] as number,
    fair_tag: r[29] as number,
    send_at: (r[30] as number | null) ?? null,
    valid_until: (r[31] as number | null) ?? null,
  };
}

/** A statement whose rows come back converted, one by one or all. */
export interface RowReader<P extends unknown[], R> {
  /** The first row, converted, or `undefined` when there is none. */
  get(...params: P): R | undefined;
  /** Every row, converted, in the statement's order. */
  all(...params: P): R[];
}

/**
 * Reads `statement`'s rows as arrays and converts each with `toRow`. better-sqlite3 builds
 * an object row in C++ by setting every column by name, which for a message row measured
 * twice as slow as the array (6.6 against 3.1 us); the worker reads a message row in each
 * of its steps.
 */
export function readRows<P extends unknown[], R>(
  statement: Database.Statement<P, unknown[]>,
  toRow: (raw: unknown[]) => R,
): RowReader<P, R> {
  statement.raw(true);
  return {
    get: (...params: P): R | undefined => {
      const raw = statement.get(...params);
      return raw === undefined ? undefined : toRow(raw);
    },
    all: (...params: P): R[] => statement.all(...params).map(toRow),
  };
}

/**
 * The insert's parameters for `m`, stored as `queued` with its parts, in its class of `rank`
 * at fair tag `tag` (claims.ts `fairPlaces`). Its lease, if any, is its queue row's (claims.ts).
 */
export function insertParams(m: NewMessage, rank: number, tag: number): unknown[] {
  return [
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
    m.createdAt,
    unsubmittedPartsJson(m.smsCount),
    rank,
    tag,
  ];
}

/** The rank of a message's class; a message without one (a host's own code) is `bulk`, the contract's default. */
export function rankOf(m: NewMessage): number {
  return m.priority === 'transactional' ? PRIORITY_RANK.transactional : PRIORITY_RANK.bulk;
}

/** The parts of a message row, in index order, as new objects the caller may change (see storage/stored-parts.ts). */
export function partsOf(row: MessageRow): PartRecord[] {
  return partsFromStored(JSON.parse(row.parts) as StoredPart[]);
}

/** A message record from its row, its parts and its report (`null` when it has none). */
export function messageRecord(row: MessageRow, parts: PartRecord[], callback: CallbackState | null): MessageRecord {
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
    priority: row.priority === PRIORITY_RANK.transactional ? 'transactional' : 'bulk',
    state: row.state,
    statusReason: row.status_reason,
    statusDescription: row.status_description,
    attempts: row.attempts,
    lastError: row.last_error,
    updatedAt: row.updated_at,
    parts,
    callback,
    sendAt: row.send_at,
    validUntil: row.valid_until,
  };
}

/** What {@link loadRecord} reads a message's report with. */
export interface ReportReads {
  /** The report of the message with this id, if it has one. */
  callbackOfMessage: Database.Statement<[number], CallbackRow>;
}

/** The whole record of message `row`: its parts and its report, read now (`null` when it has none). */
export function loadRecord(s: ReportReads, row: MessageRow): MessageRecord {
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

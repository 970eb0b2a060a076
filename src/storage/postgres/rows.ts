/**
 * Rows to records, for the PostgreSQL storage: the record query's select list, the row it
 * yields, and the mapping of that row (and of the stored functions' JSON answers, which are
 * built from the same select list) to the contract's records and results. One select list
 * serves every read and every function, so a record looks the same whichever step returned
 * it. Also the other way: a new message as the columns of the insert.
 *
 * @module
 */
import { PRIORITY_RANK } from '../../lifecycle/fair-tags.js';
import { partsFromStored, unsubmittedPartsJson, type StoredPart } from '../stored-parts.js';
import type {
  CallbackState,
  Encoding,
  Endpoint,
  CreditCharge,
  IdempotencyRecord,
  LeasedReport,
  MessageRecord,
  MessageState,
  NewMessage,
  ReceiptResult,
  RecipientField,
  ReferenceField,
  StatusReason,
  SubmissionResult,
  Transition,
} from '../contract.js';

/**
 * The record query's select list: message `m` with its report `c`. Each use appends its
 * own `FROM` (a table, a claim's CTE, or a function's changed rows).
 */
export const RECORD_SELECT = `SELECT m.ref, m.principal_id, m.endpoint, m.profile_code, m.sender, m.recipient, m.text,
        m.message_type, m.req_type, m.external_id, m.recipient_field, m.reference_field, m.sms_count,
        m.encoding, m.callback_url, m.callback_secret, m.created_at, m.state, m.status_reason,
        m.status_description, m.attempts, m.last_error, m.updated_at, m.parts, m.priority, m.send_at, m.valid_until,
        c.state AS cb_state, c.attempts AS cb_attempts, c.last_status_code AS cb_last_status_code,
        c.last_error AS cb_last_error, c.next_attempt_at AS cb_next_attempt_at`;

/**
 * A row of the record query: message columns plus its parts and callback. The `bigint`
 * times are strings in a row (pg keeps int8 exact) and numbers in the stored functions'
 * JSON; {@link toRecord} takes either.
 */
export interface RecordRow {
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
  /** The class's rank (`PRIORITY_RANK`): 0 transactional, 1 bulk. */
  priority: number;
  /** When it is due, if sent for later (lifecycle/timing.ts). */
  send_at: string | number | null;
  /** Until when it may be submitted, if it has a validity period (lifecycle/timing.ts). */
  valid_until: string | number | null;
  cb_state: string | null;
  cb_attempts: number | null;
  cb_last_status_code: number | null;
  cb_last_error: string | null;
  cb_next_attempt_at: string | number | null;
}

/** A transition as the stored functions return it (`terminate`). */
export interface TransitionJson {
  previousState: MessageState;
  message: RecordRow;
  /** The report stored leased to the receipt's lease owner, else null (or absent: `finish`, `expire_overdue`). */
  leasedReport?: LeasedReport | null;
}

/** What `record_submission` returns; the ref is the caller's. */
export type SubmissionJson = { kind: 'part' | 'stale' } | { kind: 'submitted'; message: RecordRow };

/** What `apply_receipt` returns. */
export type ReceiptJson =
  | { kind: 'unknown' }
  | { kind: 'duplicate' | 'part' | 'late'; ref: string }
  | { kind: 'terminal'; ref: string; transition: TransitionJson };

/** The result of recording a submission of message `ref`, from `record_submission`'s answer. */
export function toSubmissionResult(ref: string, json: SubmissionJson): SubmissionResult {
  if (json.kind !== 'submitted') return { kind: json.kind, ref };
  return { kind: 'submitted', transition: { message: toRecord(json.message), previousState: 'queued' } };
}

/** The result of applying a receipt, from `apply_receipt`'s answer. */
export function toReceiptResult(json: ReceiptJson): ReceiptResult {
  switch (json.kind) {
    case 'unknown':
      return { kind: 'unknown' };
    case 'terminal':
      return { kind: 'terminal', ref: json.ref, transition: toTransition(json.transition) };
    default:
      return { kind: json.kind, ref: json.ref };
  }
}

/** A transition from a stored function's answer; `leasedReport` only when there is one. */
export function toTransition(json: TransitionJson): Transition {
  const transition: Transition = { message: toRecord(json.message), previousState: json.previousState };
  if (json.leasedReport != null) transition.leasedReport = json.leasedReport;
  return transition;
}

/** int8 columns come back as strings (pg keeps them exact); times fit a double. */
function toMs(value: string | number | null): number | null {
  return value === null ? null : Number(value);
}

/** The message record of a row of the record query (or of its JSON). */
export function toRecord(row: RecordRow): MessageRecord {
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
    priority: row.priority === PRIORITY_RANK.transactional ? 'transactional' : 'bulk',
    state: row.state as MessageState,
    statusReason: row.status_reason as StatusReason | null,
    statusDescription: row.status_description,
    attempts: row.attempts,
    lastError: row.last_error,
    updatedAt: Number(row.updated_at),
    parts,
    callback,
    sendAt: toMs(row.send_at ?? null),
    validUntil: toMs(row.valid_until ?? null),
  };
}

/** Messages to insert, with the lease they are stored under (both null: none) and their request's idempotency record, if any. */
export interface InsertRows {
  messages: readonly NewMessage[];
  owner: string | null;
  until: number | null;
  idempotency?: IdempotencyRecord | null;
  /** The call's charge (credit.ts), taken in the insert's transaction. */
  credit?: CreditCharge | null;
}

/**
 * The insert's parameters (`$1` to `$27` of the insert statement). First one array per
 * column, an element per message of every call, in order: column arrays rather than a row
 * each, so one statement of a fixed text takes any number of messages. The last three of
 * them place each message in the fair order (claims.ts): its class's rank, its group (the
 * principal's messages of that class in the statement, numbered from 1 in order of first
 * appearance) and its offset in the group, `(k + 1) * (1 / weight)` for its group's k-th
 * message, as `fairTags` spaces them. Then the groups, for `fair_starts`: principal, rank and
 * the weight of its first message; and the time the class heads are taken at, the latest
 * acceptance time of the batch.
 *
 * A group whose weight changes (two requests of a principal in one batch, its weight changed
 * between them) continues from its last offset with the new step. The weight is read here,
 * not stored.
 */
export function insertParams(calls: readonly InsertRows[]): unknown[] {
  const columns: unknown[][] = Array.from({ length: 23 }, () => []);
  const groups = new Map<string, TagGroup>();
  const principals: string[] = [];
  const ranks: number[] = [];
  const weights: number[] = [];
  let now = Number.NEGATIVE_INFINITY;
  for (const { messages, owner, until } of calls) {
    for (const m of messages) {
      const rank = rankOf(m);
      const weight = weightOf(m);
      const key = `${rank}:${m.principalId}`;
      let group = groups.get(key);
      if (group === undefined) {
        group = { index: groups.size + 1, weight, base: 0, count: 0, offset: 0 };
        groups.set(key, group);
        principals.push(m.principalId);
        ranks.push(rank);
        weights.push(weight);
      }
      if (weight !== group.weight) {
        // A new run of the group: its steps go on from the last offset.
        group.weight = weight;
        group.base = group.offset;
        group.count = 0;
      }
      group.count += 1;
      group.offset = group.base + group.count * (1 / weight);
      if (m.createdAt > now) now = m.createdAt;
      const row = [
        m.ref, m.principalId, m.endpoint, m.profileCode, m.sender, m.recipient, m.text, m.messageType, m.reqType,
        m.externalId, m.recipientField, m.referenceField, m.smsCount, m.encoding, m.callbackUrl, m.callbackSecret,
        m.createdAt, owner, until, unsubmittedPartsJson(m.smsCount), rank, group.index, group.offset,
      ];
      row.forEach((value, i) => columns[i]!.push(value));
    }
  }
  return [...columns, principals, ranks, weights, Number.isFinite(now) ? now : 0];
}

/** A principal's messages of one class in an insert, as {@link insertParams} numbers them. */
interface TagGroup {
  /** Its number, from 1 (the index of its start in what `fair_starts` returns). */
  index: number;
  /** The weight of its current run of messages. */
  weight: number;
  /** The offset the current run goes on from (0 for the first). */
  base: number;
  /** Messages of the current run so far. */
  count: number;
  /** The offset of its last message. */
  offset: number;
}

/** The rank of a message's class; a message without one is `bulk`, the contract's default. */
function rankOf(m: NewMessage): number {
  return m.priority === 'transactional' ? PRIORITY_RANK.transactional : PRIORITY_RANK.bulk;
}

/**
 * A message's weight; one that is not a positive finite number (a host's own code that
 * predates weights) counts as 1, the default, rather than failing the request or giving
 * tags no spacing (0) or an infinite one.
 */
function weightOf(m: NewMessage): number {
  const weight = m.weight as unknown;
  return typeof weight === 'number' && Number.isFinite(weight) && weight > 0 ? weight : 1;
}

/**
 * The record-store contract suite's fixtures: the fixed clock, lease and race rounds it
 * shares with the storage suite, and a builder of valid message rows. Exported in part
 * (`buildMessageRow`) so a host's own tests of its record store can make rows the same way.
 *
 * @module
 */
import type { IdempotencyRecord } from '../../storage/idempotency-record.js';
import type { MessageRecord } from '../../storage/message-record.js';
import type { MessageRow, RowBook } from '../../storage/record-store.js';

export { LEASE, RACE_ROUNDS, T0 } from '../storage-suite/fixtures.js';
import { T0 } from '../storage-suite/fixtures.js';

/**
 * What {@link buildMessageRow} changes in the row it builds: any of the row's own fields, and
 * some fields of its record and of its book (merged into the defaults).
 */
export interface MessageRowOverrides extends Partial<Omit<MessageRow, 'record' | 'book'>> {
  /** Fields of the record; `parts` defaults to `smsCount` parts, unsubmitted. */
  record?: Partial<MessageRecord>;
  /** Fields of the book. */
  book?: Partial<RowBook>;
}

let refCounter = 0;

/**
 * Builds a valid {@link MessageRow}: a queued bulk message of principal `principal-a`
 * (single part, accepted at `T0`), claimable at `T0` in queue 1 with `orderKey` 0, never
 * leased, with no report pending, no timer and no carrier id, with `overrides` applied. Each
 * call gets a fresh unique `ref` unless `overrides.record.ref` is given.
 */
export function buildMessageRow(overrides: MessageRowOverrides = {}): MessageRow {
  refCounter += 1;
  const { record: recordOverrides = {}, book: bookOverrides = {}, ...rowOverrides } = overrides;
  const smsCount = recordOverrides.smsCount ?? 1;
  const record: MessageRecord = {
    ref: `row-${process.pid}-${refCounter}-${Math.random().toString(36).slice(2, 10)}`,
    principalId: 'principal-a',
    endpoint: 'quick',
    profileCode: 'PROFILE1',
    sender: 'SENDER',
    recipient: '254700000001',
    text: 'Hello',
    messageType: 1,
    reqType: 1,
    externalId: 'ext-1',
    recipientField: 'recipient',
    referenceField: 'external_id',
    smsCount,
    encoding: 'GSM-7',
    callbackUrl: null,
    callbackSecret: null,
    createdAt: T0,
    priority: 'bulk',
    sendAt: null,
    validUntil: null,
    state: 'queued',
    statusReason: null,
    statusDescription: null,
    attempts: 0,
    lastError: null,
    updatedAt: T0,
    parts: Array.from({ length: smsCount }, (_, index) => ({ index, carrierId: null, outcome: null })),
    callback: null,
    ...recordOverrides,
  };
  return {
    record,
    book: { weight: 1, charge: null, replacedCarrierIds: [], reportUid: null, ...bookOverrides },
    version: 0,
    seq: 0,
    queue: 1,
    orderKey: 0,
    dueAt: T0,
    leaseOwner: null,
    leaseUntil: null,
    reportDueAt: null,
    timer: null,
    timerAt: null,
    carrierIds: [],
    ...rowOverrides,
  };
}

/** `count` rows built as {@link buildMessageRow} builds one, each with `overrides`. */
export function buildMessageRows(count: number, overrides: MessageRowOverrides = {}): MessageRow[] {
  return Array.from({ length: count }, () => buildMessageRow(overrides));
}

/** An idempotency record of `principalId` under `key`, accepted at `createdAt` and live for `ttl` ms. */
export function idempotencyRecord(principalId: string, key: string, createdAt = T0, ttl = 3_600_000, bodyHash = 'a'.repeat(64)): IdempotencyRecord {
  return { principalId, key, bodyHash, status: 200, body: '[]', createdAt, expiresAt: createdAt + ttl };
}

/** The refs of `rows`, in order. */
export function refsOf(rows: readonly MessageRow[]): string[] {
  return rows.map((row) => row.record.ref);
}

/** A deep copy of `value`: what a test compares a stored row with after the caller's copy changed. */
export function copyOf<T>(value: T): T {
  return structuredClone(value);
}

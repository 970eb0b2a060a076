/**
 * Idempotency records on PostgreSQL: the parameters that carry a batch's records into the
 * keyed insert (statements.ts `insertMessagesKeyed`), which of the batch's calls it stored,
 * and a row as the contract's record.
 *
 * @module
 */
import type { IdempotencyRecord } from '../contract.js';
import type { InsertRows } from './rows.js';

/** A row of `findIdempotency`; the `bigint` times come back as strings. */
export interface IdempotencyRow {
  body_hash: string;
  status: number;
  body: string;
  created_at: string;
  expires_at: string;
}

/** What the keyed insert returns: the keys it took, as two arrays of one element per key. */
export interface TakenKeys {
  principals: string[];
  keys: string[];
}

/**
 * `$28`-`$35` of the keyed insert: the records' columns (principal, key, body hash, status,
 * body, created at, expires at; one element per call that has a record), then each message's
 * key (null for a call without one), in the order of the messages' columns.
 */
export function idempotencyParams(calls: readonly InsertRows[]): unknown[] {
  const columns: unknown[][] = Array.from({ length: 7 }, () => []);
  const messageKeys: (string | null)[] = [];
  for (const { messages, idempotency } of calls) {
    if (idempotency != null) {
      const r = idempotency;
      [r.principalId, r.key, r.bodyHash, r.status, r.body, r.createdAt, r.expiresAt].forEach((value, i) => columns[i]!.push(value));
    }
    for (let i = 0; i < messages.length; i++) messageKeys.push(idempotency?.key ?? null);
  }
  return [...columns, messageKeys];
}

/** For each call, whether it was stored: a call with a record only if its key was taken. */
export function storedCalls(calls: readonly InsertRows[], taken: TakenKeys): boolean[] {
  const took = new Set(taken.keys.map((key, i) => JSON.stringify([taken.principals[i], key])));
  return calls.map(({ idempotency }) => idempotency == null || took.has(JSON.stringify([idempotency.principalId, idempotency.key])));
}

/** The contract's record from a row of principal `principalId`'s key `key`. */
export function toIdempotencyRecord(principalId: string, key: string, row: IdempotencyRow): IdempotencyRecord {
  return {
    principalId,
    key,
    bodyHash: row.body_hash,
    status: row.status,
    body: row.body,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}

/**
 * Rows to records for the SQL storages' inbound part: SQLite's `sms_inbound` and
 * PostgreSQL's `inbound` share their column names, so one mapping serves both. PostgreSQL
 * returns its int8 columns as strings and SQLite as numbers; the mapping takes either.
 *
 * @module
 */
import type { InboundRecord, OptOutEntry } from './inbound-record.js';

/** The columns of an inbound row that make its record; each adapter adds its own key column. */
export interface InboundColumns {
  /** The message's ref. */
  ref: string;
  /** The owning principal, if any. */
  principal_id: string | null;
  /** The owner's profile for the number, if any. */
  profile_code: string | null;
  /** The subscriber's number. */
  from_number: string;
  /** The short code it was sent to. */
  to_address: string;
  /** The text. */
  text: string;
  /** When it arrived, epoch ms. */
  received_at: number | string;
  /** The customer's inbound URL. */
  callback_url: string | null;
  /** The secret that signs the webhook. */
  callback_secret: string | null;
  /** The webhook's id. */
  uid: string | null;
  /** The webhook's state; `null` without a webhook. */
  cb_state: 'pending' | 'delivered' | 'failed' | null;
  /** Webhook attempts made. */
  cb_attempts: number;
  /** The last attempt's HTTP status. */
  cb_last_status_code: number | null;
  /** The last attempt's error. */
  cb_last_error: string | null;
  /** When the webhook is next due, epoch ms; `null` once finished. */
  cb_next_attempt_at: number | string | null;
  /** The attempts made before a replay last started its retry schedule again; `null` or absent: never. */
  cb_restarted_after?: number | string | null;
}

/** The columns of an opt-out row. */
export interface OptOutColumns {
  /** The short code. */
  short_code: string;
  /** The subscriber's number. */
  number: string;
  /** When it was recorded, epoch ms. */
  created_at: number | string;
}

/** The record an inbound row stands for. */
export function inboundFromRow(row: InboundColumns): InboundRecord {
  return {
    ref: row.ref,
    principalId: row.principal_id,
    profileCode: row.profile_code,
    from: row.from_number,
    to: row.to_address,
    text: row.text,
    receivedAt: Number(row.received_at),
    callbackUrl: row.callback_url,
    callbackSecret: row.callback_secret,
    uid: row.uid,
    callback:
      row.cb_state === null
        ? null
        : {
            state: row.cb_state,
            attempts: row.cb_attempts,
            lastStatusCode: row.cb_last_status_code,
            lastError: row.cb_last_error,
            nextAttemptAt: row.cb_next_attempt_at === null ? null : Number(row.cb_next_attempt_at),
            ...(row.cb_restarted_after == null ? {} : { restartedAfter: Number(row.cb_restarted_after) }),
          },
  };
}

/** The columns of an inbound row that make its record, as a SQL storage selects them. */
export const INBOUND_COLUMNS =
  'ref, principal_id, profile_code, from_number, to_address, text, received_at, callback_url, callback_secret, uid, ' +
  'cb_state, cb_attempts, cb_last_status_code, cb_last_error, cb_next_attempt_at, cb_restarted_after';

/** The record a selected inbound row stands for (integer columns may come back as strings or numbers). */
export function recordOf(row: Record<string, unknown>): InboundRecord {
  return inboundFromRow({ ...(row as unknown as InboundColumns), cb_attempts: Number(row.cb_attempts) });
}

/** The entry an opt-out row stands for. */
export function optOutFromRow(row: OptOutColumns): OptOutEntry {
  return { shortCode: row.short_code, number: row.number, createdAt: Number(row.created_at) };
}

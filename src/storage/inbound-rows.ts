/**
 * Rows to records for the SQL storages' inbound tables: SQLite's `sms_inbound` and the
 * `inbound` tables of PostgreSQL and MariaDB share their column names, so one mapping serves
 * them all. PostgreSQL returns its int8 columns as strings and SQLite as numbers; the
 * mapping takes either.
 *
 * @module
 */
import type { InboundRecord, OptOutEntry } from './inbound-record.js';

/** The columns of an inbound row that make its record, as a SQL storage selects them. */
export const INBOUND_COLUMNS =
  'ref, principal_id, profile_code, from_number, to_address, text, received_at, callback_url, callback_secret, uid, ' +
  'cb_state, cb_attempts, cb_last_status_code, cb_last_error, cb_next_attempt_at, cb_restarted_after';

/** A column that may come back as a string, a number or `null`, as a number or `null`. */
function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** The record a row of {@link INBOUND_COLUMNS} stands for. */
export function recordOf(row: Record<string, unknown>): InboundRecord {
  const restartedAfter = numberOrNull(row.cb_restarted_after);
  return {
    ref: row.ref as string,
    principalId: row.principal_id as string | null,
    profileCode: row.profile_code as string | null,
    from: row.from_number as string,
    to: row.to_address as string,
    text: row.text as string,
    receivedAt: Number(row.received_at),
    callbackUrl: row.callback_url as string | null,
    callbackSecret: row.callback_secret as string | null,
    uid: row.uid as string | null,
    callback:
      row.cb_state === null
        ? null
        : {
            state: row.cb_state as 'pending' | 'delivered' | 'failed',
            attempts: Number(row.cb_attempts),
            lastStatusCode: numberOrNull(row.cb_last_status_code),
            lastError: row.cb_last_error as string | null,
            nextAttemptAt: numberOrNull(row.cb_next_attempt_at),
            ...(restartedAfter === null ? {} : { restartedAfter }),
          },
  };
}

/** The entry a row `(short_code, number, created_at)` of the opt-out table stands for. */
export function optOutOf(row: Record<string, unknown>): OptOutEntry {
  return { shortCode: row.short_code as string, number: row.number as string, createdAt: Number(row.created_at) };
}

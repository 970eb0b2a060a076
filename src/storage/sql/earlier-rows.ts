/**
 * The record-store row of a message that a storage before the record store kept (0.1.0's
 * SQLite file, the earlier PostgreSQL adapter's schema), for their upgrades (sqlite/upgrade.ts,
 * postgres/upgrade.ts). Both kept a message in columns of the same names, with its report
 * and its charge in tables of their own; each upgrade joins those under the names
 * {@link earlierRow} reads, and says what it kept its own way ({@link EarlierOwn}).
 *
 * @module
 */
import { timerAtOf, timerOf } from '../../ledger/rows.js';
import { PRIORITY_RANK } from '../../lifecycle/fair-tags.js';
import type { CallbackState } from '../callback-record.js';
import type { MessageRecord } from '../message-record.js';
import type { MessageRow, RowBook } from '../record-store.js';
import { partsFromStored, type StoredPart } from '../stored-parts.js';
import { numOrNull } from './rows.js';

/** What each earlier storage kept its own way: a message's carrier ids, and its place in the queues. */
export type EarlierOwn = Pick<MessageRow, 'carrierIds' | 'queue' | 'orderKey' | 'dueAt' | 'leaseOwner' | 'leaseUntil'> &
  Pick<RowBook, 'replacedCarrierIds'>;

/**
 * The row of the earlier message of columns `m` (the message's own; its report's as `cb_uid`,
 * `cb_state`, `cb_attempts`, `cb_last_status_code`, `cb_last_error`, `cb_next_attempt_at` and
 * `cb_lease_until`, null without one; its unsettled charge's as `charge_units` and
 * `charge_refund_failed`, null without one), with its `parts` as stored and what `own` reads
 * of the rest once the record is made.
 */
export function earlierRow(m: Record<string, unknown>, parts: StoredPart[], own: (record: MessageRecord) => EarlierOwn): MessageRow {
  const callback: CallbackState | null =
    m.cb_state === null
      ? null
      : {
          state: m.cb_state as CallbackState['state'],
          attempts: Number(m.cb_attempts),
          lastStatusCode: numOrNull(m.cb_last_status_code),
          lastError: (m.cb_last_error as string | null) ?? null,
          nextAttemptAt: numOrNull(m.cb_next_attempt_at),
        };
  const record = {
    ref: m.ref,
    principalId: m.principal_id,
    endpoint: m.endpoint,
    profileCode: m.profile_code,
    sender: m.sender,
    recipient: m.recipient,
    text: m.text,
    messageType: m.message_type,
    reqType: m.req_type,
    externalId: m.external_id,
    recipientField: m.recipient_field,
    referenceField: m.reference_field,
    smsCount: m.sms_count,
    encoding: m.encoding,
    callbackUrl: m.callback_url,
    callbackSecret: m.callback_secret,
    createdAt: Number(m.created_at),
    priority: m.priority === PRIORITY_RANK.transactional ? 'transactional' : 'bulk',
    state: m.state,
    statusReason: m.status_reason,
    statusDescription: m.status_description,
    attempts: m.attempts,
    lastError: m.last_error,
    updatedAt: Number(m.updated_at),
    parts: partsFromStored(parts),
    callback,
    sendAt: numOrNull(m.send_at),
    validUntil: numOrNull(m.valid_until),
  } as MessageRecord;
  const { carrierIds, replacedCarrierIds, ...place } = own(record);
  const pending = callback?.state === 'pending';
  return {
    record,
    book: {
      weight: numOrNull(m.weight) ?? 1,
      charge:
        m.charge_units === null
          ? null
          : { units: Number(m.charge_units), refunds: Boolean(m.charge_refund_failed) ? 'unsent-and-failed' : 'unsent' },
      replacedCarrierIds,
      reportUid: (m.cb_uid as string | null) ?? null,
    },
    version: 0,
    seq: 0,
    ...place,
    reportDueAt: pending ? Math.max(callback.nextAttemptAt ?? record.updatedAt, numOrNull(m.cb_lease_until) ?? 0) : null,
    timer: timerOf(record),
    timerAt: timerAtOf(record),
    carrierIds,
  };
}

/**
 * The delivery report body, in the two formats a principal may choose (`reportFormat`): the
 * provider's published webhook shape (`envelope`, the default) and the same fields at the
 * top level (`flat`), for receivers written to read `external_id`, `status` and `reason`
 * there (docs/delivery-reports.md#payload).
 */
import type { MessageState, StatusReason } from '../lifecycle/states.js';
import type { MessageRecord } from '../storage/contract.js';

/** The `data` of a delivery report. */
export interface DlrData {
  /** The caller's reference; always present, whichever field name the caller used. */
  external_id: string;
  /** The caller's reference again, only when the caller sent it as `message_id`. */
  message_id?: string;
  /** The id the service assigned. */
  message_ref: string;
  /** Destination number; always named `recipient`, whatever the request called it. */
  recipient: string;
  /** The message's state (terminal when a report is sent). */
  status: MessageState;
  /** Machine-readable reason, e.g. `delivered_to_terminal`. */
  status_reason: StatusReason | null;
  /** Human-readable reason. */
  status_description: string | null;
  /** SMS units the message needed. */
  sms_count: number;
}

/** A delivery report as POSTed to `dlr_callback_url`. */
export interface DlrPayload {
  /** The report's id: the same on every retry (the receiver's dedup key). */
  uid: string;
  /** Always `system`. */
  actor_type: 'system';
  /** Always `sms_delivery_status`. */
  event_type: 'sms_delivery_status';
  /** When the message reached this state, unix seconds as a string. */
  created_at: string;
  /** What happened to the message. */
  data: DlrData;
}

/**
 * Builds the report on `message` with id `uid`. `created_at` is the time of the message's
 * last change (its terminal transition), so it is the same on every retry.
 */
export function buildDlrPayload(uid: string, message: MessageRecord): DlrPayload {
  const data: DlrData = {
    external_id: message.externalId,
    ...(message.referenceField === 'message_id' ? { message_id: message.externalId } : {}),
    message_ref: message.ref,
    // As the caller wrote it, like the request's answer: it matches the report to what it sent.
    recipient: message.recipientAsSent ?? message.recipient,
    status: message.state,
    status_reason: message.statusReason,
    status_description: message.statusDescription,
    sms_count: message.smsCount,
  };
  return {
    uid,
    actor_type: 'system',
    event_type: 'sms_delivery_status',
    created_at: String(Math.floor(message.updatedAt / 1000)),
    data,
  };
}

/** How a principal's delivery reports are shaped: {@link DlrPayload} or {@link FlatDlrPayload}. */
export type ReportFormat = 'envelope' | 'flat';

/** The report format of the principal of id `principalId`, when its report is built. */
export type ReportFormatOf = (principalId: string) => ReportFormat;

/** The report formats, the default first. */
export const REPORT_FORMATS: readonly ReportFormat[] = ['envelope', 'flat'];

/**
 * A delivery report in the `flat` format: the envelope's fields with those of its `data` at
 * the top level, and `reason`, the human-readable reason under the name such receivers read.
 */
export type FlatDlrPayload = Omit<DlrPayload, 'data'> &
  DlrData & {
    /** The same text as `status_description`. */
    reason: string | null;
  };

/**
 * Builds the report on `message` with id `uid` in `format`: the same report, `data` lifted
 * to the top level for `flat`. Its `uid` and `created_at` are the same on every retry in
 * either format.
 */
export function buildReport(uid: string, message: MessageRecord, format: ReportFormat): DlrPayload | FlatDlrPayload {
  const envelope = buildDlrPayload(uid, message);
  if (format === 'envelope') return envelope;
  const { data, ...top } = envelope;
  return { ...top, ...data, reason: data.status_description };
}

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
  /**
   * The part the report is on, for a message reported part by part (`reportPer: 'part'`):
   * `status` and its reasons are then the part's. Absent on a report on the whole message.
   */
  part?: DlrPart;
}

/** The part a per-part delivery report is on. */
export interface DlrPart {
  /** 0-based part index. */
  index: number;
  /** The carrier's id for the part, or `null` when it never went. */
  carrier_id: string | null;
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
 * last change (its terminal transition), so it is the same on every retry. With `part`, the
 * report is on that part: its outcome and the time it ended (the message's, for a part that
 * ended with the message without a receipt of its own), and its index and carrier id.
 */
export function buildDlrPayload(uid: string, message: MessageRecord, part?: number): DlrPayload {
  if (part !== undefined) return partReport(uid, message, part);
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

/** The report on part `index` of `message` (see {@link buildDlrPayload}). */
function partReport(uid: string, message: MessageRecord, index: number): DlrPayload {
  const report = buildDlrPayload(uid, message);
  const part = message.parts[index];
  const own = part?.outcome ?? null;
  if (own !== null) {
    report.data.status = own.state;
    report.data.status_reason = own.reason;
    report.data.status_description = own.description;
    if (part!.endedAt !== undefined && part!.endedAt !== null) report.created_at = String(Math.floor(part!.endedAt / 1000));
  }
  report.data.part = { index, carrier_id: part?.carrierId ?? null };
  return report;
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
 * Builds the report on `message` (on its part `part`, when given) with id `uid` in `format`:
 * the same report, `data` lifted to the top level for `flat`. Its `uid` and `created_at` are the same on every retry in
 * either format.
 */
export function buildReport(uid: string, message: MessageRecord, format: ReportFormat, part?: number): DlrPayload | FlatDlrPayload {
  const envelope = buildDlrPayload(uid, message, part);
  if (format === 'envelope') return envelope;
  const { data, ...top } = envelope;
  return { ...top, ...data, reason: data.status_description };
}

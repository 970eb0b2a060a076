/**
 * A message as the storage contract takes it (`NewMessage`, given to `insertMessages`) and
 * keeps it (`MessageRecord`, with its parts): part of the storage contract (exported with
 * `Storage`), kept in a file of its own so that the contract's methods read on one page.
 *
 * @module
 */
import type { MessageState, Outcome, StatusReason } from '../lifecycle/states.js';
import type { CallbackState } from './callback-record.js';
import type { TimedFields } from './timed.js';
import type { TextRetention } from '../lifecycle/retain-text.js';

/** Which endpoint accepted a message. */
export type Endpoint = 'quick' | 'premium';

/** The field name the caller used for the recipient, echoed in responses and reports. */
export type RecipientField = 'recipient' | 'mobile_number' | 'to';

/** The field name the caller used for its own reference, echoed in responses and reports. */
export type ReferenceField = 'external_id' | 'message_id';

/** The text encoding a message goes out in. */
export type Encoding = 'GSM-7' | 'UCS-2';

/**
 * A message's class, from its profile: every due `transactional` message (one-time
 * passwords, alerts) is claimed before any `bulk` one (campaigns). Default `bulk`.
 */
export type Priority = 'transactional' | 'bulk';

/** A message as accepted from a request, before it is stored (with `sendAt`, stored `scheduled`). */
export interface NewMessage extends TimedFields {
  /** The id the service assigned (`message_ref`); unique. */
  ref: string;
  /** The principal (key owner) that sent it; lookups are scoped to it. */
  principalId: string;
  /** The endpoint that accepted it. */
  endpoint: Endpoint;
  /** The sender profile it goes out under. */
  profileCode: string;
  /** The sender address (short code or alphanumeric id) the carrier is given. */
  sender: string;
  /** Destination number, international digits without `+`. */
  recipient: string;
  /**
   * The recipient as the caller wrote it (`0712345678`, `+254 712 345 678`), when a profile's
   * `defaultCountry` let it be written otherwise than {@link recipient}: echoed in answers
   * and reports. Absent or `null`: written as stored.
   */
  recipientAsSent?: string | null;
  /** The recipient's ISO 3166 alpha-2 country (`KE`); absent or `null` when the metadata cannot tell. */
  country?: string | null;
  /**
   * The recipient's line type as libphonenumber names it, lower case (`mobile`,
   * `fixed_line_or_mobile`, `voip`, ...); absent or `null` when the metadata cannot tell.
   */
  numberType?: string | null;
  /**
   * Why its `sendAt` is later than the request asked: `quiet_hours` when a bulk message came
   * inside its profile's quiet hours and is held until they end. Absent or `null`: not held.
   */
  holdReason?: 'quiet_hours' | null;
  /**
   * The shape of its delivery report, its principal's `reportFormat` when it was accepted,
   * kept with it so that every instance sends the report alike, however long it waits.
   * Absent or `null`: its principal's format when the report is sent (`envelope` when unknown).
   */
  reportFormat?: 'envelope' | 'flat' | null;
  /**
   * `part` when its profile asks for one delivery report per part (`Profile.reportPer`):
   * each part's report is born when the part ends (docs/delivery-reports.md#one-report-per-part).
   * Absent or `null`: one report for the message, when it ends.
   */
  reportPer?: 'part' | null;
  /**
   * How long its text is kept, its profile's or principal's `retainText` when it was
   * accepted: `until-final` or `days:N` (docs/retain-text.md). Absent or `null`: always.
   */
  retainText?: TextRetention | null;
  /** The text; `[redacted]` once redacted (see {@link MessageRecord.textSha256}). */
  text: string;
  /** Passed on as given; default 1. */
  messageType: number;
  /** Passed on as given; default 1. */
  reqType: number;
  /** The caller's reference (not unique). */
  externalId: string;
  /** Field name used for the recipient in the request. */
  recipientField: RecipientField;
  /** Field name used for the reference in the request. */
  referenceField: ReferenceField;
  /** SMS units (parts) the text needs. */
  smsCount: number;
  /** The encoding the parts are sent in. */
  encoding: Encoding;
  /** Where the delivery report goes, if anywhere. */
  callbackUrl: string | null;
  /** Secret that signs this message's delivery report (the principal's), if any. */
  callbackSecret: string | null;
  /**
   * When it was accepted, in epoch milliseconds: its first due time (a claim at an earlier
   * `now` does not return it), and its `updatedAt` when stored.
   */
  createdAt: number;
  /** Its class: transactional messages are claimed before bulk ones. */
  priority: Priority;
  /**
   * Its principal's share of the carrier against the other principals with queued messages
   * of its class (the principal's `weight`, default 1): in each turn a principal of weight 2
   * has two messages claimed where one of weight 1 has one. Not part of the record
   * ({@link MessageRecord} has no `weight`), but an adapter whose fair order needs it after the
   * insert keeps it: `Storage.promoteScheduled` gives a scheduled message its place
   * in the order when it comes due, and needs its weight then.
   */
  weight: number;
  /**
   * The W3C trace context (`traceparent`) of the send request's span, when the request was
   * traced (OpenTelemetry, docs/operations.md): the submission, receipt and delivery report
   * spans start as its children, one trace per message however long it waits. Kept with the
   * record; a storage that drops it loses only that link (its later spans are not recorded),
   * nothing else. Absent or `null`: not traced.
   */
  traceparent?: string | null;
}

/** One part of a message as the carrier knows it. */
export interface PartRecord {
  /** 0-based part index. */
  index: number;
  /** The carrier's id for this part, once submitted (the latest, if submitted twice). */
  carrierId: string | null;
  /**
   * The part's outcome once its receipt came, else `null`; kept also when the receipt came
   * after the message ended (a `late` receipt), which changes nothing else.
   */
  outcome: Outcome | null;
  /**
   * When the carrier accepted the part, epoch ms (its latest submission); `null` until then.
   * Absent on a part stored before parts kept their times; set together with
   * {@link endedAt}: a part has both keys or neither.
   */
  submittedAt?: number | null;
  /** When the part's receipt came (its outcome's time), epoch ms; `null` until then. Absent as {@link submittedAt}. */
  endedAt?: number | null;
}

/** A stored message with its current state. */
export interface MessageRecord extends Omit<NewMessage, 'weight'> {
  /** Current lifecycle state. */
  state: MessageState;
  /** Reason of the terminal state, else `null`. */
  statusReason: StatusReason | null;
  /** Description of the terminal state, else `null`. */
  statusDescription: string | null;
  /**
   * Submission attempts given back for a retry: {@link Storage.reschedule} adds one, nothing
   * else does. The attempts made (the status answer's `submit_attempts`) count the one that
   * submitted or ended the message too: `submitAttempts(message)`.
   */
  attempts: number;
  /** Last retryable submission error, for the status endpoint and logs. */
  lastError: string | null;
  /**
   * When the message last changed, epoch ms: `createdAt` when stored; then the `now` of each
   * call that moves its state, records a part's submission, gives it back for a retry
   * (`Storage.reschedule`) or records a part's receipt. A call that changes nothing
   * (`stale`, `duplicate`, `late`, a second `finish`) leaves it. Receipt timeouts
   * (`Storage.expireOverdue`) and retention (`Storage.purge`) pick by it.
   */
  updatedAt: number;
  /** Parts, `smsCount` of them, in index order. */
  parts: PartRecord[];
  /** The delivery report's state, once one exists (the message is terminal and has a URL). */
  callback: CallbackState | null;
  /**
   * The SHA-256 (hex) of its text, once the text was redacted under its `retainText` and
   * replaced with `[redacted]`; absent or `null` while the text is kept.
   */
  textSha256?: string | null;
  /**
   * The SHA-256 (hex) of its recipient's digits, once the subscriber was erased (`sms.erase`,
   * docs/erase.md): {@link recipient} is then `[erased]`. Absent or `null` until then.
   */
  recipientSha256?: string | null;
}

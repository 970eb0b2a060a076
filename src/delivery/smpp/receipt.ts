/**
 * What an SMSC's codes mean for a message: the delivery receipt text of SMPP 3.4
 * appendix B, the receipt's `stat` and `message_state` values, and the `command_status`
 * of a refused `submit_sm`, each mapped onto the lifecycle of `lifecycle/states.ts`.
 *
 * Pure functions and tables only; no network, no `smpp` package.
 */
import { outcome, type Outcome, type StatusReason } from '../../lifecycle/states.js';

/** The fields of a receipt text; each is `null` when the text does not carry it. */
export interface ReceiptFields {
  /** The carrier's message id, as written. */
  id: string | null;
  /** Parts submitted (`sub`). */
  sub: string | null;
  /** Parts delivered (`dlvrd`). */
  dlvrd: string | null;
  /** `submit date`, as written (YYMMDDhhmm). */
  submitDate: string | null;
  /** `done date`, as written. */
  doneDate: string | null;
  /** The final state word, upper-cased (`DELIVRD`, `UNDELIV`, ...). */
  stat: string | null;
  /** The carrier's error code, as written. */
  err: string | null;
  /** The start of the original text, when the carrier echoes it. */
  text: string | null;
}

const FIELD = /(?:^|[\s,;])(id|sub|dlvrd|submit[ _]?date|done[ _]?date|stat|err)\s*:\s*([^\s,;]*)/gi;
const TEXT = /(?:^|\s)text\s*:/i;

/**
 * Parses the standard receipt text (`id:... sub:... dlvrd:... submit date:... done
 * date:... stat:... err:... text:...`), tolerant of case, field order, extra spaces and
 * missing fields. `text:` is taken to run to the end, since it may contain anything.
 */
export function parseReceiptText(input: string): ReceiptFields {
  const fields: ReceiptFields = {
    id: null,
    sub: null,
    dlvrd: null,
    submitDate: null,
    doneDate: null,
    stat: null,
    err: null,
    text: null,
  };
  let head = input;
  const textAt = TEXT.exec(input);
  if (textAt) {
    head = input.slice(0, textAt.index);
    fields.text = input.slice(textAt.index + textAt[0].length);
  }
  for (const match of head.matchAll(FIELD)) {
    const key = (match[1] ?? '').toLowerCase().replace(/[ _]/g, '');
    const value = match[2] ?? '';
    if (value === '') continue;
    switch (key) {
      case 'id':
        fields.id ??= value;
        break;
      case 'sub':
        fields.sub ??= value;
        break;
      case 'dlvrd':
        fields.dlvrd ??= value;
        break;
      case 'submitdate':
        fields.submitDate ??= value;
        break;
      case 'donedate':
        fields.doneDate ??= value;
        break;
      case 'stat':
        fields.stat ??= value.toUpperCase();
        break;
      case 'err':
        fields.err ??= value;
        break;
    }
  }
  return fields;
}

/**
 * The `message_state` TLV values (SMPP 3.4 section 5.2.28, plus 9 of v5.0) as the
 * receipt `stat` words they stand for.
 */
export const MESSAGE_STATE_STATS: Readonly<Record<number, string>> = {
  0: 'SCHEDULED',
  1: 'ENROUTE',
  2: 'DELIVRD',
  3: 'EXPIRED',
  4: 'DELETED',
  5: 'UNDELIV',
  6: 'ACCEPTD',
  7: 'UNKNOWN',
  8: 'REJECTD',
  9: 'SKIPPED',
};

/** Long spellings some SMSCs write instead of the 7-letter words. */
const STAT_ALIASES: Readonly<Record<string, string>> = {
  DELIVERED: 'DELIVRD',
  UNDELIVERABLE: 'UNDELIV',
  UNDELIVERED: 'UNDELIV',
  REJECTED: 'REJECTD',
  ACCEPTED: 'ACCEPTD',
};

/** States that are not final: the message is still on its way. */
const INTERMEDIATE_STATS = new Set(['ENROUTE', 'ACCEPTD', 'SCHEDULED']);

/**
 * Error codes (`err:` of the receipt, as GSM MAP error numbers, the common convention)
 * that mean the handset was unreachable rather than that delivery is impossible:
 * 6 absentSubscriberSM, 27 absentSubscriber.
 */
const ABSENT_SUBSCRIBER_ERRORS = new Set([6, 27]);

/**
 * What a receipt `stat` means:
 * - a terminal {@link Outcome}: `DELIVRD` delivered; `UNDELIV` undelivered
 *   (`absent_subscriber` when `err` is a MAP absent-subscriber code, else
 *   `delivery_impossible`); `EXPIRED` expired; `REJECTD` rejected; `DELETED`
 *   undelivered/`delivery_impossible` (the carrier dropped it before the handset had it);
 *   `SKIPPED` undelivered/`delivery_impossible`; `UNKNOWN` undelivered/`unknown`;
 * - `'intermediate'` for `ENROUTE`, `ACCEPTD`, `SCHEDULED` (not reported);
 * - `null` for a word it does not know (the caller reports it rather than guess).
 */
export function outcomeOfStat(stat: string, err?: string | null): Outcome | 'intermediate' | null {
  const word = STAT_ALIASES[stat.toUpperCase()] ?? stat.toUpperCase();
  if (INTERMEDIATE_STATS.has(word)) return 'intermediate';
  switch (word) {
    case 'DELIVRD':
      return outcome('delivered', 'delivered_to_terminal');
    case 'UNDELIV': {
      const code = err != null && /^\d+$/.test(err) ? Number(err) : null;
      const reason: StatusReason =
        code !== null && ABSENT_SUBSCRIBER_ERRORS.has(code) ? 'absent_subscriber' : 'delivery_impossible';
      return outcome('undelivered', reason);
    }
    case 'EXPIRED':
      return outcome('expired', 'expired');
    case 'REJECTD':
      return outcome('rejected', 'rejected');
    case 'DELETED':
    case 'SKIPPED':
      return outcome('undelivered', 'delivery_impossible');
    case 'UNKNOWN':
      return outcome('undelivered', 'unknown');
    default:
      return null;
  }
}

/** A receipt as read from a `deliver_sm`. */
export interface ReceiptInput {
  /** The decoded `short_message` (or `message_payload`) text. */
  text: string;
  /** The `receipted_message_id` TLV, if present. */
  receiptedMessageId?: string | null | undefined;
  /** The `message_state` TLV, if present. */
  messageState?: number | null | undefined;
}

/** A receipt understood: the id it names and what became of the part. */
export interface InterpretedReceipt {
  /** The carrier id, as written (TLV first, else the text's `id:`). */
  carrierId: string;
  /** The state word used (after the TLV took precedence). */
  stat: string;
  /** The terminal outcome, `'intermediate'`, or `null` for an unknown state word. */
  outcome: Outcome | 'intermediate' | null;
}

/**
 * Reads a delivery receipt. The `receipted_message_id` and `message_state` TLVs win over
 * the text when present. Returns `null` when no id or no state can be found.
 */
export function interpretReceipt(input: ReceiptInput): InterpretedReceipt | null {
  const fields = parseReceiptText(input.text);
  const tlvId = input.receiptedMessageId?.trim();
  const carrierId = tlvId ? tlvId : fields.id;
  const tlvStat = input.messageState != null ? MESSAGE_STATE_STATS[input.messageState] : undefined;
  const stat = tlvStat ?? fields.stat;
  if (!carrierId || !stat) return null;
  return { carrierId, stat, outcome: outcomeOfStat(stat, fields.err) };
}

/** How a refused `submit_sm` is handled. */
export type SubmitStatusClass =
  | { kind: 'throttled' }
  | { kind: 'permanent'; outcome: Outcome }
  | { kind: 'retryable' };

const INVALID_SOURCE = outcome('rejected', 'invalid_source_address');
const BAD_DESTINATION = outcome('rejected', 'delivery_impossible');
const REFUSED = outcome('rejected', 'rejected');

/**
 * `command_status` codes that can never succeed on retry, with the outcome the message
 * ends in: source address problems are `invalid_source_address`, destination problems
 * `delivery_impossible`, and refusals of the message itself `rejected`. Every code not
 * listed (system errors, unknown vendor codes) is retried.
 */
export const PERMANENT_SUBMIT_STATUSES: ReadonlyMap<number, Outcome> = new Map([
  [0x0a, INVALID_SOURCE], // ESME_RINVSRCADR
  [0x48, INVALID_SOURCE], // ESME_RINVSRCTON
  [0x49, INVALID_SOURCE], // ESME_RINVSRCNPI
  [0x0b, BAD_DESTINATION], // ESME_RINVDSTADR
  [0x40, BAD_DESTINATION], // ESME_RINVDESTFLAG
  [0x50, BAD_DESTINATION], // ESME_RINVDSTTON
  [0x51, BAD_DESTINATION], // ESME_RINVDSTNPI
  [0x01, REFUSED], // ESME_RINVMSGLEN
  [0x15, REFUSED], // ESME_RINVSERTYP
  [0x43, REFUSED], // ESME_RINVESMCLASS
  [0x65, REFUSED], // ESME_RX_P_APPN
  [0x66, REFUSED], // ESME_RX_R_APPN
  [0x100, REFUSED], // ESME_RSERTYPUNAUTH
  [0x101, REFUSED], // ESME_RPROHIBITED
  [0x103, REFUSED], // ESME_RSERTYPDENIED
  [0x104, REFUSED], // ESME_RINVDCS
]);

/** `command_status` codes that mean "slow down": ESME_RMSGQFUL, ESME_RTHROTTLED. */
export const THROTTLE_SUBMIT_STATUSES: ReadonlySet<number> = new Set([0x14, 0x58]);

/** Classifies the `command_status` of a refused `submit_sm`. */
export function classifySubmitStatus(status: number): SubmitStatusClass {
  if (THROTTLE_SUBMIT_STATUSES.has(status)) return { kind: 'throttled' };
  const permanent = PERMANENT_SUBMIT_STATUSES.get(status);
  if (permanent) return { kind: 'permanent', outcome: { ...permanent } };
  return { kind: 'retryable' };
}

/**
 * The OpenAPI document's component schemas: the request bodies (the validators' own JSON
 * Schemas, from `http/schemas.ts`, so the document states exactly what the router
 * accepts), the accepted-message answers, a message's status, the error body and the
 * delivery report in its two formats.
 *
 * @module
 */
import { ERRORS } from '../errors.js';
import type { LimitOptions } from '../http/options.js';
import { premiumListSchema, premiumMessagesSchema, quickSendSchema } from '../http/schemas.js';
import { PENDING_STATES, STATUS_DESCRIPTIONS, TERMINAL_STATES } from '../lifecycle/states.js';
import { ref, type Schema } from './refs.js';

const STATES = [...PENDING_STATES, ...TERMINAL_STATES];
const REASONS = Object.keys(STATUS_DESCRIPTIONS);
const REASON_LIST = REASONS.map((reason) => `\`${reason}\``).join(', ');

/** The fields every delivery report has outside `data`, in either format. */
const REPORT_TOP_FIELDS = ['uid', 'actor_type', 'event_type', 'created_at'];

/** The fields of a delivery report's `data` that are always there (`message_id` is not). */
const REPORT_DATA_FIELDS = ['external_id', 'message_ref', 'recipient', 'status', 'status_reason', 'status_description', 'sms_count'];

/** A `message_ref`: the UUID (version 7, so refs sort by creation) the service assigned. */
const MESSAGE_REF = { type: 'string', format: 'uuid' };

/** The premium list form as clients may send it: `to` may also be one number, not a list. */
function premiumListRequest(limits: Required<LimitOptions>): Schema {
  const base = premiumListSchema(limits);
  return {
    ...base,
    properties: { ...base.properties, to: { anyOf: [base.properties.to.items, base.properties.to] } },
    // A body with `messages` is read as the messages form, whatever else it carries.
    not: { properties: { messages: {} }, required: ['messages'] },
  };
}

/** An accepted-message item of a 200 answer, with the field names one request form uses. */
function acceptedItem(reference: string, recipient: string): Schema {
  return {
    type: 'object',
    required: [reference, recipient, 'sms_count', 'message_ref'],
    properties: {
      [reference]: { type: 'string', description: 'The caller\u2019s reference, echoed as a string (generated when none was sent).' },
      [recipient]: { type: 'string', description: 'The destination number, as the request wrote it.' },
      sms_count: { type: 'integer', minimum: 1, description: 'SMS units the text needs (GSM 03.38); bill from this.' },
      message_ref: { ...MESSAGE_REF, description: 'The id the service assigned; use it to query the status.' },
    },
  };
}

/** `components.schemas`, with the request bounds of `limits`. */
export function componentSchemas(limits: Required<LimitOptions>): Record<string, Schema> {
  const reason = { type: ['string', 'null'], enum: [...REASONS, null] };
  // A delivery report's fields, shared by its two formats (`data` nested, or at the top).
  const reportTop = {
    uid: { type: 'string', description: 'The report\u2019s id, the same on every retry (and the `webhook-id` header): dedup on it.' },
    actor_type: { const: 'system' },
    event_type: { const: 'sms_delivery_status' },
    created_at: { type: 'string', pattern: '^[0-9]+$', description: 'When the message reached its state, unix seconds.' },
  };
  const reportData = {
    external_id: { type: 'string', description: 'The caller\u2019s reference, whichever field name it used.' },
    message_id: { type: 'string', description: 'The reference again, only when the caller sent it as `message_id`.' },
    message_ref: MESSAGE_REF,
    recipient: { type: 'string' },
    status: { type: 'string', enum: [...TERMINAL_STATES] },
    status_reason: reason,
    status_description: { type: ['string', 'null'] },
    sms_count: { type: 'integer', minimum: 1 },
    part: {
      type: 'object',
      description:
        'Only on a report on one part (a profile with `reportPer: \'part\'`): the part it is on. `status` and its ' +
        'reasons are then the part\u2019s, and `created_at` when the part ended.',
      required: ['index', 'carrier_id'],
      properties: { index: { type: 'integer', minimum: 0 }, carrier_id: { type: ['string', 'null'] } },
    },
  };
  return {
    QuickSendRequest: { ...quickSendSchema(limits), description: 'Quick send: one item per message.' },
    PremiumMessagesRequest: {
      ...premiumMessagesSchema(limits),
      description: 'Premium send, messages form: as quick send, with `mobile_number` for `recipient`.',
    },
    PremiumListRequest: {
      ...premiumListRequest(limits),
      description:
        'Premium send, the published parameter-list form: one text to every number in `to`. `from` is the ' +
        'short code (one of the profile\u2019s senders); `message_id` is the caller\u2019s reference for every number.',
    },
    PremiumSendRequest: { oneOf: [ref('schemas', 'PremiumMessagesRequest'), ref('schemas', 'PremiumListRequest')] },
    QuickAccepted: acceptedItem('external_id', 'recipient'),
    PremiumMessagesAccepted: acceptedItem('external_id', 'mobile_number'),
    PremiumListAccepted: acceptedItem('message_id', 'to'),
    MessageStatus: {
      type: 'object',
      description:
        'A message as its sender may see it. The reference and the recipient carry the field names the ' +
        'request used (`external_id` or `message_id`; `recipient`, `mobile_number` or `to`).',
      required: ['message_ref', 'profile_code', 'status', 'sms_count'],
      properties: {
        message_ref: MESSAGE_REF,
        external_id: { type: 'string' },
        message_id: { type: 'string' },
        recipient: { type: 'string' },
        mobile_number: { type: 'string' },
        to: { type: 'string' },
        normalized_recipient: {
          type: 'string',
          description: 'The recipient as stored and sent: international digits without `+`, however the request wrote it.',
        },
        country: { type: ['string', 'null'], description: 'The recipient\u2019s ISO 3166 alpha-2 country, when the number tells it.' },
        number_type: {
          type: ['string', 'null'],
          description: 'The recipient\u2019s line type in libphonenumber\u2019s names, lower case (`mobile`, `fixed_line_or_mobile`, ...), when the number tells it.',
        },
        profile_code: { type: 'string' },
        status: { type: 'string', enum: STATES },
        status_reason: { ...reason, description: `Set once terminal: ${REASON_LIST}.` },
        status_description: { type: ['string', 'null'] },
        sms_count: { type: 'integer', minimum: 1 },
        submit_attempts: { type: 'integer', minimum: 0 },
        redacted: {
          type: 'boolean',
          enum: [true],
          description:
            'Present, `true`, once the text was redacted under its profile\u2019s or key\u2019s `retainText`: the gateway keeps only `text_sha256`. Absent while the text is kept.',
        },
        text_sha256: {
          type: 'string',
          pattern: '^[0-9a-f]{64}$',
          description: 'With `redacted`: the SHA-256 (hex) of the UTF-8 text that was sent, so the sender can prove what it was.',
        },
        created_at: { type: ['string', 'null'], format: 'date-time' },
        updated_at: { type: ['string', 'null'], format: 'date-time' },
        send_at: { type: ['string', 'null'], format: 'date-time', description: 'When it is due, if the request gave a `send_at` ahead.' },
        valid_until: {
          type: ['string', 'null'],
          format: 'date-time',
          description: 'Until when it may be submitted, if it has a validity period; past it, unsent, it ends `expired`.',
        },
        callback: {
          description: 'The delivery report, when the request gave a `dlr_callback_url`.',
          oneOf: [
            { type: 'null' },
            {
              type: 'object',
              required: ['url', 'state', 'attempts'],
              properties: {
                url: { type: 'string' },
                state: { type: 'string', enum: ['waiting', 'pending', 'delivered', 'failed'] },
                attempts: { type: 'integer', minimum: 0 },
                last_status_code: { type: ['integer', 'null'] },
                last_error: { type: ['string', 'null'] },
                next_attempt_at: { type: ['string', 'null'], format: 'date-time' },
              },
            },
          ],
        },
        parts: {
          type: 'array',
          description:
            'Each SMS part, in index order, as the carrier knows it. A part without a receipt of its own has the ' +
            'message\u2019s state (`submitted` once it went; the message\u2019s terminal state, reason and time when it ended without one).',
          items: ref('schemas', 'MessagePart'),
        },
      },
    },
    PreviewItem: {
      type: 'object',
      description:
        'What the send would do with one message of the body. The recipient and the reference carry the field names the ' +
        'request used. An item the send would refuse has only `index` and `error`.',
      required: ['index', 'error'],
      properties: {
        index: { type: 'integer', minimum: 0, description: 'The message\u2019s place in the body.' },
        recipient: { type: 'string' },
        mobile_number: { type: 'string' },
        to: { type: 'string' },
        external_id: { type: ['string', 'null'], description: 'The reference sent, or `null` when the send would generate one.' },
        message_id: { type: ['string', 'null'] },
        normalized_recipient: { type: 'string', description: 'The recipient as it would be stored and sent.' },
        encoding: { type: 'string', enum: ['GSM-7', 'UCS-2'] },
        sms_count: { type: 'integer', minimum: 1, description: 'The SMS units of the text as it would be sent.' },
        smart_encoding: {
          description:
            'What smart encoding makes of a UCS-2 text whose only UCS-2 characters have GSM-7 look-alikes: `applied` when the ' +
            'profile has it on (then `encoding` and `sms_count` above are these). `null` when it would change nothing.',
          oneOf: [
            { type: 'null' },
            {
              type: 'object',
              required: ['applied', 'encoding', 'sms_count'],
              properties: { applied: { type: 'boolean' }, encoding: { type: 'string', enum: ['GSM-7', 'UCS-2'] }, sms_count: { type: 'integer', minimum: 1 } },
            },
          ],
        },
        units: { type: ['integer', 'null'], description: 'The credit units the send would take for it; `null` when the gateway charges no credit.' },
        sender: { type: 'string', description: 'The sender address it would go out from.' },
        route: { type: ['string', 'null'], description: 'The carrier route it would take now, when the gateway has routes.' },
        opted_out: { type: 'boolean', description: 'The recipient opted out of the sender: the send would end it `rejected` (`opted_out`) unsent.' },
        send_at: { type: ['string', 'null'], format: 'date-time', description: 'When it would be due, when later than now (a `send_at`, or quiet hours).' },
        hold_reason: { type: ['string', 'null'], enum: ['quiet_hours', null], description: '`quiet_hours` when the profile\u2019s quiet hours hold it.' },
        valid_until: { type: ['string', 'null'], format: 'date-time', description: 'Until when it could be submitted, with a validity period.' },
        error: {
          description: 'The error the send would answer for this message (the same `code` and `details`), or `null`.',
          oneOf: [{ type: 'null' }, ref('schemas', 'Error')],
        },
      },
    },
    MessagePart: {
      type: 'object',
      required: ['index', 'carrier_id', 'status', 'error_code', 'submitted_at', 'final_at'],
      properties: {
        index: { type: 'integer', minimum: 0, description: '0-based part index.' },
        carrier_id: { type: ['string', 'null'], description: 'The carrier\u2019s id for the part (its latest submission); `null` before it went.' },
        status: { type: 'string', enum: STATES },
        error_code: { ...reason, description: 'Why the part did not end `delivered` (a `status_reason`); `null` otherwise.' },
        submitted_at: { type: ['string', 'null'], format: 'date-time', description: 'When the carrier accepted it.' },
        final_at: { type: ['string', 'null'], format: 'date-time', description: 'When it reached its final state.' },
      },
    },
    MessagePage: {
      type: 'object',
      required: ['messages', 'next'],
      properties: {
        messages: { type: 'array', items: ref('schemas', 'MessageStatus'), description: 'The page\u2019s messages, newest accepted first.' },
        next: { type: ['string', 'null'], description: 'The cursor of the next page (send it as `cursor`), or `null` on the last page.' },
      },
    },
    ReportPage: {
      type: 'object',
      required: ['reports', 'next'],
      properties: {
        reports: {
          type: 'array',
          items: { oneOf: [ref('schemas', 'DeliveryReport'), ref('schemas', 'FlatDeliveryReport')] },
          description: 'The reports, oldest first, each as its callback carries it (in the message\u2019s report format).',
        },
        next: { type: ['string', 'null'], description: 'Send it as `after` next time; `null` only before the first report.' },
      },
    },
    CancelResult: {
      type: 'object',
      required: ['cancelled', 'not_cancelled'],
      properties: {
        cancelled: { type: 'array', items: MESSAGE_REF, description: 'The messages now `cancelled`.' },
        not_cancelled: {
          type: 'array',
          description: 'The messages that had already gone (or ended), or that a worker was about to submit, with their status.',
          items: {
            type: 'object',
            required: ['message_ref', 'status'],
            properties: { message_ref: MESSAGE_REF, status: { type: 'string', enum: STATES } },
          },
        },
      },
    },
    Error: {
      type: 'object',
      required: ['details', 'code'],
      properties: {
        details: {
          type: 'string',
          minLength: 1,
          description:
            'Human-readable reason: the contract clients read. Its texts are stable (one changes only in a major release); `Invalid Profile Code` and `500 server-error` are as the original service wrote them.',
        },
        code: {
          type: 'string',
          enum: Object.keys(ERRORS),
          description: 'Stable machine-readable name of the error, from the error registry, beside `details`: the simpler one for a program to match.',
        },
      },
    },
    DeliveryReport: {
      type: 'object',
      description: 'The `envelope` report format (the default): the provider\u2019s published webhook shape.',
      required: [...REPORT_TOP_FIELDS, 'data'],
      properties: {
        ...reportTop,
        data: { type: 'object', required: REPORT_DATA_FIELDS, properties: reportData },
      },
    },
    FlatDeliveryReport: {
      type: 'object',
      description:
        'The `flat` report format (a principal\u2019s `reportFormat: \'flat\'`): the envelope\u2019s fields with those of its `data` at the top level, and `reason`.',
      required: [...REPORT_TOP_FIELDS, ...REPORT_DATA_FIELDS, 'reason'],
      properties: {
        ...reportTop,
        ...reportData,
        reason: { type: ['string', 'null'], description: 'The same text as `status_description`, under the name such receivers read.' },
      },
    },
    InboundMessage: {
      type: 'object',
      required: ['uid', 'actor_type', 'event_type', 'created_at', 'data'],
      properties: {
        uid: { type: 'string', description: 'The webhook\u2019s id, the same on every retry (and the `webhook-id` header): dedup on it.' },
        actor_type: { const: 'system' },
        event_type: { const: 'sms_inbound' },
        created_at: { type: 'string', pattern: '^[0-9]+$', description: 'When the message arrived, unix seconds.' },
        data: {
          type: 'object',
          required: ['message_ref', 'from', 'to', 'message', 'profile_code', 'received_at'],
          properties: {
            message_ref: { type: 'string', format: 'uuid', description: 'The id the service gave the inbound message.' },
            from: { type: 'string', pattern: '^[0-9]+$', description: 'The subscriber\u2019s number, international digits.' },
            to: { type: 'string', description: 'The short code (or number) it was sent to.' },
            message: { type: 'string', description: 'The text; a long message sent in parts arrives whole.' },
            profile_code: { type: ['string', 'null'], description: 'The profile of the short code\u2019s owner.' },
            received_at: { type: 'string', pattern: '^[0-9]+$', description: 'When it arrived, unix seconds.' },
          },
        },
      },
    },
  };
}

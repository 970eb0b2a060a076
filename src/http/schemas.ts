/**
 * The JSON Schemas of the request bodies (docs/endpoints.md#request-bodies). One source of
 * truth: the validators are compiled from these, and an OpenAPI document can be built from
 * them.
 */
import type { LimitOptions } from './options.js';

/** Digits in international format: country code first, no plus sign, 8 to 15 digits. */
export const PHONE_PATTERN = '^[1-9][0-9]{7,14}$';

/**
 * What the schema lets through to the recipient stage (recipients.ts): digits, with a `+`
 * and spaces or punctuation a profile's `defaultCountry` may read. Which of them is accepted
 * depends on the profile, known only after validation.
 */
export const RECIPIENT_PATTERN = '^[+(]?[0-9][0-9 ().-]{2,30}[0-9]$';

const phone = {
  type: 'string',
  pattern: RECIPIENT_PATTERN,
  description: "International digits without '+' (254712345678); with the profile's defaultCountry also '+254 712 345 678' or 0712345678.",
} as const;
const text = { type: 'string', minLength: 1 } as const;
// Every optional field also takes `null`, read as absent: typed clients' JSON serializers
// (Jackson, System.Text.Json, Newtonsoft by default) write an unset field that way.
const int32 = { type: ['integer', 'null'], minimum: 0, maximum: 2147483647 } as const;
/**
 * A string reference, or a JSON integer that is echoed back as a string. `""` is a
 * reference too: it is kept and echoed, since clients compare the echo with what they sent.
 */
const reference = {
  type: ['string', 'integer', 'null'],
  maxLength: 128,
  minimum: Number.MIN_SAFE_INTEGER,
  maximum: Number.MAX_SAFE_INTEGER,
} as const;
/** A string; a JSON integer is accepted too, as clients of the original service send one. */
const profileCode = { type: ['string', 'integer'], minLength: 1, maxLength: 64, minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;
// No `minLength`: real clients of the original service send `""` to ask for no report,
// and the validator reads it as absent, like `null`.
const callbackUrl = { type: ['string', 'null'], maxLength: 2048 } as const;
/**
 * When to send: an RFC 3339 time, or Unix seconds (validate-request.ts reads both; the past
 * means now, and at most {@link SEND_AT_MAX_AHEAD_MS} ahead).
 */
const sendAt = {
  type: ['string', 'integer', 'null'],
  maxLength: 64,
  minimum: 0,
  maximum: 253402300799,
  description: 'When to send: an RFC 3339 time or Unix seconds, at most 30 days ahead; a time past means now.',
} as const;
/** How long the message is worth sending, seconds: not submitted within it, it is never sent. */
const validityPeriod = {
  type: ['integer', 'null'],
  minimum: 30,
  maximum: 172800,
  description: 'Seconds the message is worth sending, from when it is due: not submitted within them, it ends `expired`.',
} as const;

/** How far ahead `send_at` may be: 30 days, ms. */
export const SEND_AT_MAX_AHEAD_MS = 30 * 86_400_000;

function messageItem(recipientField: 'recipient' | 'mobile_number') {
  return {
    type: 'object',
    required: [recipientField, 'message'],
    properties: {
      [recipientField]: phone,
      message: text,
      message_type: int32,
      req_type: int32,
      external_id: reference,
    },
  } as const;
}

function messagesBody(recipientField: 'recipient' | 'mobile_number', limits: Required<LimitOptions>) {
  return {
    type: 'object',
    required: ['profile_code', 'messages'],
    properties: {
      profile_code: profileCode,
      messages: { type: 'array', minItems: 1, maxItems: limits.maxMessagesPerRequest, items: messageItem(recipientField) },
      dlr_callback_url: callbackUrl,
      send_at: sendAt,
      validity_period: validityPeriod,
    },
  } as const;
}

/** Schema of `POST /create` (quick send). */
export function quickSendSchema(limits: Required<LimitOptions>) {
  return messagesBody('recipient', limits);
}

/** Schema of `POST /premium` in its `messages` form. */
export function premiumMessagesSchema(limits: Required<LimitOptions>) {
  return messagesBody('mobile_number', limits);
}

/** Schema of `POST /premium` in its published parameter-list form (`to`, `from`, `message_id`). */
export function premiumListSchema(limits: Required<LimitOptions>) {
  return {
    type: 'object',
    required: ['profile_code', 'to', 'message'],
    properties: {
      profile_code: profileCode,
      // A single number is accepted too; the validator wraps it in an array first.
      to: { type: 'array', minItems: 1, maxItems: limits.maxMessagesPerRequest, items: phone },
      message: text,
      // `""` is read as absent (the profile's default sender), as clients send it for "none".
      from: { type: ['string', 'null'], maxLength: 16 },
      message_id: reference,
      message_type: int32,
      req_type: int32,
      dlr_callback_url: callbackUrl,
      send_at: sendAt,
      validity_period: validityPeriod,
    },
  } as const;
}

/**
 * Every error a client can be answered with, in one registry: a stable code, the HTTP
 * status, and the `details` text. The README's error table is checked against it by a test.
 */

/**
 * The registry: code -> status and default `details`. An error answer is
 * `{ "details": ..., "code": <key> }`: `details` for people, the key for programs to match.
 */
export const ERRORS = {
  INVALID_JSON: { status: 400, details: 'Body is not valid JSON' },
  INVALID_IDEMPOTENCY_KEY: { status: 400, details: 'Idempotency-Key must be 1 to 255 visible ASCII characters, without spaces' },
  INVALID_CURSOR: { status: 400, details: 'cursor is not a next this endpoint gave' },
  MISSING_API_KEY: { status: 401, details: 'Missing X-API-Key header' },
  INVALID_API_KEY: { status: 401, details: 'Invalid API key' },
  KEY_EXPIRED: { status: 401, details: 'API key has expired' },
  KEY_DISABLED: { status: 403, details: 'API key is disabled' },
  IP_NOT_ALLOWED: { status: 403, details: 'API key may not be used from this address' },
  SCOPE_DENIED: { status: 403, details: 'API key may not use this endpoint' },
  READ_SCOPE_DENIED: { status: 403, details: 'API key lacks the read scope' },
  CANCEL_SCOPE_DENIED: { status: 403, details: 'API key lacks the cancel scope' },
  PREVIEW_SCOPE_DENIED: { status: 403, details: 'API key lacks the preview scope' },
  CALLBACKS_SCOPE_DENIED: { status: 403, details: 'API key lacks the callbacks scope' },
  NOT_FOUND: { status: 404, details: 'Message not found' },
  INSUFFICIENT_CREDIT: { status: 402, details: 'Insufficient credit' },
  METHOD_NOT_ALLOWED: { status: 405, details: 'Method not allowed' },
  IDEMPOTENCY_IN_FLIGHT: { status: 409, details: 'A request with this Idempotency-Key is still being processed; retry shortly' },
  BODY_TOO_LARGE: { status: 413, details: 'Body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, details: 'Content-Type must be application/json' },
  INVALID_PROFILE: { status: 422, details: 'Invalid Profile Code' },
  VALIDATION_FAILED: { status: 422, details: 'Invalid request' },
  INVALID_LIST_QUERY: { status: 422, details: 'Invalid list query' },
  INVALID_REPLAY: { status: 422, details: 'Invalid replay request' },
  INVALID_RECIPIENT: { status: 422, details: 'Recipient is not a valid phone number' },
  NOT_MOBILE: { status: 422, details: 'Recipient is not a number that can take SMS' },
  IDEMPOTENCY_CONFLICT: { status: 422, details: 'Idempotency-Key was already used for a different request' },
  RATE_LIMITED: { status: 429, details: 'Too many requests' },
  QUEUE_FULL: { status: 429, details: 'Too many queued messages for this key' },
  SPEND_CAP_REACHED: { status: 429, details: 'The SMS units this key may send in the period are used up' },
  BACKLOG_FULL: { status: 503, details: 'The gateway has too many queued messages' },
  SERVER_ERROR: { status: 500, details: '500 server-error' },
} as const satisfies Record<string, { status: number; details: string }>;

/** A stable error code. */
export type ErrorCode = keyof typeof ERRORS;

/**
 * An error answered to the client as `{ "details": ..., "code": ... }` with the registry's
 * status. `details` defaults to the registry's text; validation errors name the field instead.
 */
export class SmsError extends Error {
  /** The stable code, sent as `code`. */
  readonly code: ErrorCode;
  /** The HTTP status. */
  readonly status: number;
  /** The text sent as `details`. */
  readonly details: string;
  /** Seconds sent as `Retry-After`, when the client may try again later. */
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, details?: string, retryAfter?: number) {
    const entry = ERRORS[code];
    super(details ?? entry.details);
    this.name = 'SmsError';
    this.code = code;
    this.status = entry.status;
    this.details = details ?? entry.details;
    this.retryAfter = retryAfter;
  }
}

/**
 * The codes of the errors thrown when the router (or an adapter) is built with a bad
 * option: every such error is an {@link OptionError}, a `TypeError` with one of these.
 */
export const OPTION_ERRORS = {
  UNKNOWN_OPTION: 'an option name that does not exist; the message suggests the nearest one',
  INVALID_OPTION: 'an option of the wrong type or out of range',
  INVALID_ADAPTER: 'an adapter (storage, delivery, resolveProfile) that is null, a class, a promise or lacks methods of its contract',
  DASHBOARD_UNGUARDED: '`createSmsDashboard` without an `auth` hook or `allowUnauthenticated: true`: the console has no login of its own',
} as const;

/** A stable option error code. */
export type OptionErrorCode = keyof typeof OPTION_ERRORS;

/** A bad option, thrown at construction. A `TypeError`, with a stable `code` to match. */
export class OptionError extends TypeError {
  /** The stable code. */
  readonly code: OptionErrorCode;

  constructor(message: string, code: OptionErrorCode = 'INVALID_OPTION') {
    super(message);
    this.name = 'OptionError';
    this.code = code;
  }
}

/**
 * The codes of `error` events (`ErrorEvent.code`). An event carries the code of an error
 * the router raised itself, or else its source's code; the error stays as it was thrown
 * (a storage driver's error keeps its own class and fields).
 */
export const EVENT_ERRORS = {
  STORAGE_FAILED: 'a storage call failed (source `storage`, or `worker` for one of its steps)',
  CARRIER_FAILED: 'the carrier connection or a submission failed outside a message (source `delivery`)',
  RECEIPT_FAILED: 'a carrier receipt could not be applied (source `receipt`)',
  RECEIPT_DROPPED: 'a receipt still matched no submission after `worker.receiptWaitMs`, and was dropped',
  RECEIPT_UNREADABLE: 'a receipt from the carrier could not be read, or had an unknown status',
  REPORT_FAILED: 'a delivery report could not be sent or recorded (source `dlr`)',
  REQUEST_FAILED: 'a request failed with a 500 (source `request`)',
  VERIFY_KEY_RESULT: '`verifyKey` returned something that is not a principal; the request got a 500',
  RETAIN_TEXT_RESULT: "a profile's or principal's `retainText` from the host's resolver or verifier cannot be read; the request got a 500",
  SPEND_CAPS_UNSUPPORTED: 'a principal has `dailyUnits` or `monthlyUnits` and the storage keeps no counters (no `countedUnits`); the request got a 500',
  RATE_LIMIT_SETUP: 'a rate-limit store or setting is unsafe or failing (e.g. `trust proxy` true)',
  LISTENER_FAILED: 'an event listener threw (source `listener`)',
  CREDIT_REFUND_FAILED: "the `credit` hook's refund() threw or rejected; the units were not given back (source `credit`)",
} as const;

/** A stable `error` event code. */
export type EventErrorCode = keyof typeof EVENT_ERRORS;

/** An error the router raises itself and reports through the `error` event, with a stable `code`. */
export class EventError extends Error {
  /** The stable code. */
  readonly code: EventErrorCode;

  constructor(code: EventErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EventError';
    this.code = code;
  }
}

/**
 * The code of `error` when it is an {@link EventError}. Checked by shape, not `instanceof`:
 * the package's entries (`sms-outbox`, `sms-outbox/smpp`, ...) are bundled apart, each with
 * its own copy of the class.
 */
export function eventErrorCode(error: unknown): EventErrorCode | undefined {
  if (!(error instanceof Error) || error.name !== 'EventError') return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && Object.hasOwn(EVENT_ERRORS, code) ? (code as EventErrorCode) : undefined;
}


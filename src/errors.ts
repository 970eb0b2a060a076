/**
 * Every error a client can be answered with, in one registry: a stable code, the HTTP
 * status, and the `details` text. The README's error table is checked against it by a test.
 */

/** The registry: code -> status and default `details`. */
export const ERRORS = {
  INVALID_JSON: { status: 400, details: 'Body is not valid JSON' },
  MISSING_API_KEY: { status: 401, details: 'Missing X-API-Key header' },
  INVALID_API_KEY: { status: 401, details: 'Invalid API key' },
  KEY_DISABLED: { status: 403, details: 'API key is disabled' },
  SCOPE_DENIED: { status: 403, details: 'API key may not use this endpoint' },
  NOT_FOUND: { status: 404, details: 'Message not found' },
  BODY_TOO_LARGE: { status: 413, details: 'Body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, details: 'Content-Type must be application/json' },
  INVALID_PROFILE: { status: 422, details: 'Invalid Profile Code' },
  VALIDATION_FAILED: { status: 422, details: 'Invalid request' },
  RATE_LIMITED: { status: 429, details: 'Too many requests' },
  SERVER_ERROR: { status: 500, details: '500 server-error' },
} as const satisfies Record<string, { status: number; details: string }>;

/** A stable error code. */
export type ErrorCode = keyof typeof ERRORS;

/**
 * An error answered to the client as `{ "details": ... }` with the registry's status.
 * `details` defaults to the registry's text; validation errors name the field instead.
 */
export class SmsError extends Error {
  /** The stable code. */
  readonly code: ErrorCode;
  /** The HTTP status. */
  readonly status: number;
  /** The text sent as `details`. */
  readonly details: string;

  constructor(code: ErrorCode, details?: string) {
    const entry = ERRORS[code];
    super(details ?? entry.details);
    this.name = 'SmsError';
    this.code = code;
    this.status = entry.status;
    this.details = details ?? entry.details;
  }
}

/**
 * The OpenAPI document's component responses: every error answer of the endpoints, each
 * with the examples of the error codes it carries, taken from the error registry
 * (`errors.ts`) so the document shows the very `details` the router sends.
 *
 * @module
 */
import { ERRORS, type ErrorCode } from '../errors.js';
import type { LimitOptions } from '../http/limits.js';
import { phoneProblem } from '../http/validate-request.js';
import { json, ref } from './refs.js';

/** `{ details }` examples keyed by error code, from the error registry. */
function errorExamples(codes: readonly ErrorCode[], details: Partial<Record<ErrorCode, string>> = {}) {
  return Object.fromEntries(
    codes.map((code) => [code, { summary: code, value: { details: details[code] ?? ERRORS[code].details } }]),
  );
}

/** `components.responses`: the error answers, with the body limit of `limits`. */
export function componentResponses(limits: Required<LimitOptions>): Record<string, unknown> {
  const error = (description: string, examples: Record<string, unknown>, headers?: Record<string, unknown>) => ({
    description,
    ...(headers ? { headers } : {}),
    content: json({ schema: ref('schemas', 'Error'), examples }),
  });
  const header = (description: string, type: string) => ({ description, schema: { type } });
  return {
    BadRequest: error('The body is not valid JSON (or is empty, or was cut short).', errorExamples(['INVALID_JSON'])),
    Unauthorized: error(
      'The `X-API-Key` header is missing or not a valid key.',
      errorExamples(['MISSING_API_KEY', 'INVALID_API_KEY']),
      { 'WWW-Authenticate': header('`ApiKey header="X-API-Key"`', 'string') },
    ),
    Forbidden: error(
      'The key is valid but may not do this: it is disabled, or lacks the scope of the endpoint.',
      errorExamples(['KEY_DISABLED', 'SCOPE_DENIED'], { SCOPE_DENIED: 'API key may not use the premium endpoint' }),
    ),
    NotFound: error('No such message, or it is another key\u2019s.', errorExamples(['NOT_FOUND'])),
    PayloadTooLarge: error(
      `The body is larger than ${limits.maxBodyBytes} bytes.`,
      errorExamples(['BODY_TOO_LARGE'], { BODY_TOO_LARGE: `Body is larger than ${limits.maxBodyBytes} bytes` }),
    ),
    UnsupportedMediaType: error('`Content-Type` is not JSON, or not UTF-8.', errorExamples(['UNSUPPORTED_MEDIA_TYPE'])),
    Unprocessable: error(
      '`Invalid Profile Code` when the profile is unknown or not the key\u2019s own; otherwise the field that failed and why.',
      errorExamples(['INVALID_PROFILE', 'VALIDATION_FAILED'], {
        VALIDATION_FAILED: `messages[0].recipient: ${phoneProblem('+254712345678')}`,
      }),
    ),
    TooManyRequests: error('The rate limit was hit; the standard `RateLimit` headers tell the window.', errorExamples(['RATE_LIMITED']), {
      'Retry-After': header('Seconds until a request may be made again.', 'integer'),
    }),
    SendTooManyRequests: error(
      'The rate limit was hit (the standard `RateLimit` headers tell the window), or the key has as many messages queued as it may. Nothing was stored or charged.',
      errorExamples(['RATE_LIMITED', 'QUEUE_FULL'], {
        QUEUE_FULL: 'Too many queued messages for this key: 100000 queued, at most 100000; retry once some are sent',
      }),
      { 'Retry-After': header('Seconds until a request may be made again (for a full queue: estimated from how fast it drains).', 'integer') },
    ),
    ServiceUnavailable: error(
      'The gateway has as many messages queued in all as it may. Nothing was stored or charged.',
      errorExamples(['BACKLOG_FULL'], { BACKLOG_FULL: 'The gateway has too many queued messages; retry once some are sent' }),
      { 'Retry-After': header('Seconds until a request may be made again, estimated from how fast the queue drains.', 'integer') },
    ),
    ServerError: error(
      'An unexpected failure. The answer is always exactly this; the cause is reported to the operator.',
      errorExamples(['SERVER_ERROR']),
    ),
  };
}

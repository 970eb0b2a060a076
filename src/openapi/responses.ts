/**
 * The OpenAPI document's component responses: every error answer of the endpoints, each
 * with the examples of the error codes it carries, taken from the error registry
 * (`errors.ts`) so the document shows the very `details` and `code` the router sends, and
 * with the headers that go with it (`Retry-After`, the rate-limit headers, `Allow`).
 *
 * @module
 */
import { ERRORS, type ErrorCode } from '../errors.js';
import type { LimitOptions } from '../http/options.js';
import type { RateLimitHeaders } from '../http/rate-limit/options.js';
import { phoneProblem } from '../http/validate-request.js';
import { header, json, pacingHeaders, rateLimitHeaders, ref } from './refs.js';

/** `{ details, code }` examples keyed by error code, from the error registry. */
function errorExamples(codes: readonly ErrorCode[], details: Partial<Record<ErrorCode, string>> = {}) {
  return Object.fromEntries(
    codes.map((code) => [code, { summary: code, value: { details: details[code] ?? ERRORS[code].details, code } }]),
  );
}

const retryAfter = (description: string) => header(description, 'integer', true);

/**
 * `components.responses`: the error answers, with the body limit of `limits`. With
 * `rateLimitHeaders: 'always'` the answers given after authentication may carry the
 * rate-limit headers too (401 and 403 come before the per-key limit, 405 before the route).
 */
export function componentResponses(limits: Required<LimitOptions>, rateLimit: RateLimitHeaders): Record<string, unknown> {
  const pacing = pacingHeaders(rateLimit);
  const error = (description: string, examples: Record<string, unknown>, headers: Record<string, unknown> = pacing) => ({
    description,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: json({ schema: ref('schemas', 'Error'), examples }),
  });
  return {
    BadRequest: error(
      'The body is not valid JSON (or is empty, nested too deep, or was cut short), or the `Idempotency-Key` is not 1 to 255 visible ASCII characters (or the gateway\u2019s storage keeps no keys).',
      errorExamples(['INVALID_JSON', 'INVALID_IDEMPOTENCY_KEY']),
    ),
    Unauthorized: error(
      'The `X-API-Key` header is missing or not a valid key, or the key has expired (`KEY_EXPIRED`: ask for its successor).',
      errorExamples(['MISSING_API_KEY', 'INVALID_API_KEY', 'KEY_EXPIRED']),
      { 'WWW-Authenticate': header('`ApiKey header="X-API-Key"`', 'string', true) },
    ),
    Forbidden: error(
      'The key is valid but may not do this: it is disabled, may not be used from the client\u2019s address (`IP_NOT_ALLOWED`), or lacks the scope of the endpoint (`SCOPE_DENIED` for a send, `READ_SCOPE_DENIED`, `CANCEL_SCOPE_DENIED`, `PREVIEW_SCOPE_DENIED`, `CALLBACKS_SCOPE_DENIED`).',
      errorExamples(['KEY_DISABLED', 'IP_NOT_ALLOWED', 'SCOPE_DENIED', 'READ_SCOPE_DENIED', 'CANCEL_SCOPE_DENIED', 'PREVIEW_SCOPE_DENIED', 'CALLBACKS_SCOPE_DENIED'], { SCOPE_DENIED: 'API key may not use the premium endpoint' }),
      {},
    ),
    PaymentRequired: error(
      'The key\u2019s credit cannot pay the request\u2019s SMS units (when the gateway charges credit). Nothing was stored or charged.',
      errorExamples(['INSUFFICIENT_CREDIT'], { INSUFFICIENT_CREDIT: 'Insufficient credit: the request needs 3 SMS units, the balance is 2' }),
    ),
    NotFound: error('No such message, or it is another key\u2019s.', errorExamples(['NOT_FOUND'])),
    MethodNotAllowed: error(
      'The path exists, but not with this method.',
      errorExamples(['METHOD_NOT_ALLOWED'], { METHOD_NOT_ALLOWED: 'Method not allowed here; use POST' }),
      { Allow: header('The methods the path takes, e.g. `POST, OPTIONS`.', 'string', true) },
    ),
    IdempotencyInFlight: error(
      'A request with the same `Idempotency-Key` is still being processed. Retry after `Retry-After`: the retry then gets its answer.',
      errorExamples(['IDEMPOTENCY_IN_FLIGHT']),
      { 'Retry-After': retryAfter('Seconds to wait before retrying: 1.'), ...pacing },
    ),
    PayloadTooLarge: error(
      `The body is larger than ${limits.maxBodyBytes} bytes (once decompressed).`,
      errorExamples(['BODY_TOO_LARGE'], { BODY_TOO_LARGE: `Body is larger than ${limits.maxBodyBytes} bytes` }),
    ),
    UnsupportedMediaType: error(
      '`Content-Type` is not JSON (`application/json` or `application/*+json`), its charset is not UTF-8, or `Content-Encoding` is not one of `identity`, `gzip`, `deflate`, `br`.',
      errorExamples(['UNSUPPORTED_MEDIA_TYPE']),
    ),
    Unprocessable: error(
      '`Invalid Profile Code` when the profile is unknown or not the key\u2019s own; the `Idempotency-Key` was used for a different request; a recipient the profile does not take (`INVALID_RECIPIENT`: not a number in use; `NOT_MOBILE`: a number that cannot take SMS, such as a landline); otherwise the field that failed and why. Nothing of the request is stored.',
      errorExamples(['INVALID_PROFILE', 'VALIDATION_FAILED', 'INVALID_RECIPIENT', 'NOT_MOBILE', 'IDEMPOTENCY_CONFLICT'], {
        VALIDATION_FAILED: `messages[0].recipient: ${phoneProblem('+254712345678')}`,
        INVALID_RECIPIENT: 'messages[0].recipient: is not a number in use for KE',
        NOT_MOBILE: 'messages[0].recipient: is a fixed line number for GB, which cannot take SMS',
      }),
    ),
    BadListCursor: error('`cursor` (or `after`) is not a `next` this endpoint gave.', errorExamples(['INVALID_CURSOR'])),
    BadListQuery: error(
      'A list parameter the endpoint does not know, one given twice, or a value it does not take; `details` names the parameter and the rule.',
      errorExamples(['INVALID_LIST_QUERY'], { INVALID_LIST_QUERY: 'limit: must be a whole number from 1 to 1000' }),
    ),
    TooManyRequests: error('A rate limit was hit; the `RateLimit` headers tell which, and its window.', errorExamples(['RATE_LIMITED']), {
      'Retry-After': retryAfter('Seconds until a request may be made again.'),
      ...rateLimitHeaders(true),
    }),
    SendTooManyRequests: error(
      'A rate limit was hit (the `RateLimit` headers tell which, and its window), the key has as many messages queued as it may, or the SMS units its principal may send in the day or the month (`dailyUnits`, `monthlyUnits`) would be passed (`SPEND_CAP_REACHED`; no `RateLimit` headers for either). Nothing was stored or charged.',
      errorExamples(['RATE_LIMITED', 'QUEUE_FULL', 'SPEND_CAP_REACHED'], {
        QUEUE_FULL: 'Too many queued messages for this key: 100000 queued, at most 100000; retry once some are sent',
      }),
      {
        'Retry-After': retryAfter(
          'Seconds until a request may be made again (for a full queue: estimated from how fast it drains; for a spend cap: until its day or month ends in the gateway\u2019s `spendCaps.timeZone`).',
        ),
        ...rateLimitHeaders(false),
      },
    ),
    ServiceUnavailable: error(
      'The gateway has as many messages queued in all as it may. Nothing was stored or charged.',
      errorExamples(['BACKLOG_FULL'], { BACKLOG_FULL: 'The gateway has too many queued messages; retry once some are sent' }),
      { 'Retry-After': retryAfter('Seconds until a request may be made again, estimated from how fast the queue drains.'), ...pacing },
    ),
    ServerError: error(
      'An unexpected failure. The answer is always exactly this; the cause is reported to the operator.',
      errorExamples(['SERVER_ERROR']),
    ),
  };
}

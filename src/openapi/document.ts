/**
 * `buildOpenApiDocument`: the OpenAPI 3.1 description of the send API, generated from the
 * same JSON Schemas the request validators are compiled from (`http/schemas.ts`), so the
 * document cannot drift from what the router accepts.
 */
import { ERRORS, type ErrorCode } from '../errors.js';
import { phoneProblem } from '../http/validate-request.js';
import { premiumListSchema, premiumMessagesSchema, quickSendSchema } from '../http/schemas.js';
import { STATUS_DESCRIPTIONS, TERMINAL_STATES } from '../lifecycle/states.js';
import { LIMIT_DEFAULTS, type LimitOptions } from '../http/limits.js';

/** Options of {@link buildOpenApiDocument}. All optional. */
export interface OpenApiDocumentOptions {
  /**
   * The path prefix of the endpoints as clients see them: the mount point and the router's
   * `basePath` together (e.g. `/sms/api/outbox`). Default `/api/outbox`.
   */
  basePath?: string;
  /** The router's `limits`, so the stated bounds match. Default: the router's defaults. */
  limits?: LimitOptions;
  /** Absolute URL of the server, written to `servers`. Default: none (the document's own origin). */
  serverUrl?: string;
  /** Overrides of the `info` object (title, version, description). */
  info?: { title?: string; version?: string; description?: string };
}

/** An OpenAPI 3.1 document, as plain JSON-serialisable data. */
export interface OpenApiDocument {
  /** Always `3.1.0`. */
  openapi: '3.1.0';
  /** Title, version and description. */
  info: { title: string; version: string; description?: string };
  /** The server, when `serverUrl` was given. */
  servers?: { url: string }[];
  /** The default security requirement (the API key). */
  security: Record<string, string[]>[];
  /** The four endpoints. */
  paths: Record<string, unknown>;
  /** The delivery report the service POSTs to `dlr_callback_url`. */
  webhooks: Record<string, unknown>;
  /** Shared schemas, responses, parameters and the security scheme. */
  components: Record<string, Record<string, unknown>>;
}

type Schema = Record<string, unknown>;

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const json = (content: Record<string, unknown>) => ({ 'application/json': content });

const STATES = ['queued', 'submitted', ...TERMINAL_STATES];
const REASONS = Object.keys(STATUS_DESCRIPTIONS);
const REASON_LIST = REASONS.map((reason) => `\`${reason}\``).join(', ');

/** `{ details }` examples keyed by error code, from the error registry. */
function errorExamples(codes: readonly ErrorCode[], details: Partial<Record<ErrorCode, string>> = {}) {
  return Object.fromEntries(
    codes.map((code) => [code, { summary: code, value: { details: details[code] ?? ERRORS[code].details } }]),
  );
}

/** The premium list form as clients may send it: `to` may also be one number, not a list. */
function premiumListRequest(limits: Required<LimitOptions>): Schema {
  const base = premiumListSchema(limits);
  return {
    ...base,
    properties: { ...base.properties, to: { anyOf: [base.properties.to.items, base.properties.to] } },
    // A body with `messages` is read as the messages form, whatever else it carries.
    not: { required: ['messages'] },
  };
}

/** An accepted-message item of a 200 answer, with the field names one request form uses. */
function acceptedItem(reference: string, recipient: string): Schema {
  return {
    type: 'object',
    required: [reference, recipient, 'sms_count', 'message_ref'],
    properties: {
      [reference]: { type: 'string', description: 'The caller\u2019s reference, echoed as a string (generated when none was sent).' },
      [recipient]: { type: 'string', description: 'The destination number.' },
      sms_count: { type: 'integer', minimum: 1, description: 'SMS units the text needs (GSM 03.38); bill from this.' },
      message_ref: { type: 'string', description: 'The id the service assigned; use it to query the status.' },
    },
  };
}

function schemas(limits: Required<LimitOptions>): Record<string, Schema> {
  const reason = { type: ['string', 'null'], enum: [...REASONS, null] };
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
        message_ref: { type: 'string' },
        external_id: { type: 'string' },
        message_id: { type: 'string' },
        recipient: { type: 'string' },
        mobile_number: { type: 'string' },
        to: { type: 'string' },
        profile_code: { type: 'string' },
        status: { type: 'string', enum: STATES },
        status_reason: { ...reason, description: `Set once terminal: ${REASON_LIST}.` },
        status_description: { type: ['string', 'null'] },
        sms_count: { type: 'integer', minimum: 1 },
        submit_attempts: { type: 'integer', minimum: 0 },
        created_at: { type: ['string', 'null'], format: 'date-time' },
        updated_at: { type: ['string', 'null'], format: 'date-time' },
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
      },
    },
    Error: {
      type: 'object',
      required: ['details'],
      properties: { details: { type: 'string', description: 'Human-readable reason.' } },
    },
    DeliveryReport: {
      type: 'object',
      required: ['uid', 'actor_type', 'event_type', 'created_at', 'data'],
      properties: {
        uid: { type: 'string', description: 'The report\u2019s id, the same on every retry (and the `webhook-id` header): dedup on it.' },
        actor_type: { const: 'system' },
        event_type: { const: 'sms_delivery_status' },
        created_at: { type: 'string', pattern: '^[0-9]+$', description: 'When the message reached its state, unix seconds.' },
        data: {
          type: 'object',
          required: ['external_id', 'message_ref', 'recipient', 'status', 'status_reason', 'status_description', 'sms_count'],
          properties: {
            external_id: { type: 'string', description: 'The caller\u2019s reference, whichever field name it used.' },
            message_id: { type: 'string', description: 'The reference again, only when the caller sent it as `message_id`.' },
            message_ref: { type: 'string' },
            recipient: { type: 'string' },
            status: { type: 'string', enum: [...TERMINAL_STATES] },
            status_reason: reason,
            status_description: { type: ['string', 'null'] },
            sms_count: { type: 'integer', minimum: 1 },
          },
        },
      },
    },
  };
}

function responses(limits: Required<LimitOptions>): Record<string, unknown> {
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
    ServerError: error(
      'An unexpected failure. The answer is always exactly this; the cause is reported to the operator.',
      errorExamples(['SERVER_ERROR']),
    ),
  };
}

const SEND_ERRORS = {
  '400': ref('responses', 'BadRequest'),
  '401': ref('responses', 'Unauthorized'),
  '403': ref('responses', 'Forbidden'),
  '413': ref('responses', 'PayloadTooLarge'),
  '415': ref('responses', 'UnsupportedMediaType'),
  '422': ref('responses', 'Unprocessable'),
  '429': ref('responses', 'TooManyRequests'),
  '500': ref('responses', 'ServerError'),
};

const STATUS_ERRORS = {
  '401': ref('responses', 'Unauthorized'),
  '403': ref('responses', 'Forbidden'),
  '429': ref('responses', 'TooManyRequests'),
  '500': ref('responses', 'ServerError'),
};

const QUICK_EXAMPLE = {
  profile_code: '12345',
  messages: [{ recipient: '254712345678', message: 'Hello', message_type: 1, req_type: 1, external_id: 'abc-1' }],
  dlr_callback_url: 'https://client.example/dlr',
};

const PREMIUM_MESSAGES_EXAMPLE = {
  profile_code: '22021501',
  messages: [{ mobile_number: '254712345678', message: 'Premium hello', external_id: 'p-1' }],
};

const PREMIUM_LIST_EXAMPLE = {
  profile_code: '22021501',
  to: ['254712345678', '254712345679'],
  message: 'Hi both',
  from: '22021501',
  message_id: 'm-1',
  dlr_callback_url: 'https://client.example/dlr',
};

const REF = '6f1c2a9e-4b7d-4c1e-9a55-0b2f6d8e3c41';

function sendOperation(
  operationId: string,
  summary: string,
  body: Schema,
  examples: Record<string, unknown>,
  accepted: Schema,
  answer: Record<string, unknown>,
): Record<string, unknown> {
  return {
    post: {
      operationId,
      summary,
      description:
        'Stores every message of the request or none, and answers one item per message in request order. ' +
        'Each message later reaches one terminal state, reported to `dlr_callback_url` (see the `deliveryReport` webhook).',
      requestBody: { required: true, content: json({ schema: body, examples }) },
      responses: {
        '200': {
          description: 'Accepted: one item per message, in request order.',
          content: json({ schema: { type: 'array', items: accepted }, examples: answer }),
        },
        ...SEND_ERRORS,
      },
    },
  };
}

function paths(basePath: string): Record<string, unknown> {
  return {
    [`${basePath}/create`]: sendOperation(
      'quickSend',
      'Quick send',
      ref('schemas', 'QuickSendRequest'),
      { quick: { summary: 'One message', value: QUICK_EXAMPLE } },
      ref('schemas', 'QuickAccepted'),
      { quick: { value: [{ external_id: 'abc-1', recipient: '254712345678', sms_count: 1, message_ref: REF }] } },
    ),
    [`${basePath}/premium`]: sendOperation(
      'premiumSend',
      'Premium (subscription, MT/MO) send',
      ref('schemas', 'PremiumSendRequest'),
      {
        messages: { summary: 'Messages form', value: PREMIUM_MESSAGES_EXAMPLE },
        list: { summary: 'Parameter-list form', value: PREMIUM_LIST_EXAMPLE },
      },
      { oneOf: [ref('schemas', 'PremiumMessagesAccepted'), ref('schemas', 'PremiumListAccepted')] },
      {
        messages: { value: [{ external_id: 'p-1', mobile_number: '254712345678', sms_count: 1, message_ref: REF }] },
        list: { value: [{ message_id: 'm-1', to: '254712345678', sms_count: 1, message_ref: REF }] },
      },
    ),
    [`${basePath}/delivery-status/{message_ref}`]: {
      get: {
        operationId: 'getDeliveryStatus',
        summary: 'Status of one of the caller\u2019s messages',
        parameters: [{ name: 'message_ref', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '200': { description: 'The message.', content: json({ schema: ref('schemas', 'MessageStatus') }) },
          '404': ref('responses', 'NotFound'),
          ...STATUS_ERRORS,
        },
      },
    },
    [`${basePath}/delivery-status`]: {
      get: {
        operationId: 'findByExternalId',
        summary: 'The caller\u2019s messages with one reference, newest first (at most 100)',
        parameters: [{ name: 'external_id', in: 'query', required: true, schema: { type: 'string', minLength: 1 } }],
        responses: {
          '200': {
            description: 'The matches; an empty array when there are none.',
            content: json({ schema: { type: 'array', items: ref('schemas', 'MessageStatus') } }),
          },
          '422': ref('responses', 'Unprocessable'),
          ...STATUS_ERRORS,
        },
      },
    },
  };
}

const WEBHOOKS = {
  deliveryReport: {
    post: {
      operationId: 'deliveryReport',
      summary: 'Delivery report, POSTed to the request\u2019s `dlr_callback_url`',
      description:
        'Sent once a message reaches a terminal state. Any 2xx answer ends it; anything else is retried on a ' +
        'schedule that spans hours, with the same `uid`, so delivery is at-least-once. Redirects are not followed. ' +
        'When a secret is configured the report is signed by the Standard Webhooks scheme.',
      security: [],
      parameters: [
        { name: 'webhook-id', in: 'header', required: false, description: 'The report\u2019s `uid`.', schema: { type: 'string' } },
        {
          name: 'webhook-timestamp',
          in: 'header',
          required: false,
          description: 'Unix seconds of this attempt; reject old ones.',
          schema: { type: 'string', pattern: '^[0-9]+$' },
        },
        {
          name: 'webhook-signature',
          in: 'header',
          required: false,
          description: '`v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` (present when signed).',
          schema: { type: 'string' },
        },
      ],
      requestBody: {
        required: true,
        content: json({
          schema: ref('schemas', 'DeliveryReport'),
          examples: {
            delivered: {
              value: {
                uid: '0b8f7c1e-2d4a-4f5b-8c6d-7e9f0a1b2c3d',
                actor_type: 'system',
                event_type: 'sms_delivery_status',
                created_at: '1594868435',
                data: {
                  external_id: 'abc-1',
                  message_ref: REF,
                  recipient: '254712345678',
                  status: 'delivered',
                  status_reason: 'delivered_to_terminal',
                  status_description: STATUS_DESCRIPTIONS.delivered_to_terminal,
                  sms_count: 1,
                },
              },
            },
          },
        }),
      },
      responses: {
        '2XX': { description: 'Received; the report is not sent again.' },
        default: { description: 'Not received; the report is retried (410 Gone stops it).' },
      },
    },
  },
};

/**
 * Builds the OpenAPI 3.1 document of the send API: both send endpoints (premium as a
 * `oneOf` of its two forms), the status endpoints, every error answer with examples, the
 * `X-API-Key` security scheme and the delivery report as a webhook.
 *
 * The request schemas are the validators' own, so pass the router's `limits` to state the
 * same bounds. The router serves this document at `<basePath>/openapi.json` (see the
 * `openapi` option), with `basePath` set to where it is mounted. A new object every call.
 */
export function buildOpenApiDocument(options: OpenApiDocumentOptions = {}): OpenApiDocument {
  const limits = { ...LIMIT_DEFAULTS, ...options.limits };
  const basePath = (options.basePath ?? '/api/outbox').replace(/\/+$/, '');
  // Cloned so a caller (or a validator that dereferences in place) may change the result
  // without touching the shared constants and schemas it is built from.
  return structuredClone<OpenApiDocument>({
    openapi: '3.1.0',
    info: {
      title: options.info?.title ?? 'SMS send API',
      version: options.info?.version ?? '1.0.0',
      description:
        options.info?.description ??
        'Send SMS through the quick and premium endpoints, query delivery status, and receive delivery reports. ' +
          `Numbers are digits in international format, country code first, no plus sign. A message may need at most ${limits.maxSegments} SMS units; ` +
          `a request may carry at most ${limits.maxMessagesPerRequest} messages and ${limits.maxBodyBytes} bytes.`,
    },
    ...(options.serverUrl === undefined ? {} : { servers: [{ url: options.serverUrl }] }),
    security: [{ ApiKey: [] }],
    paths: paths(basePath),
    webhooks: WEBHOOKS,
    components: {
      schemas: schemas(limits),
      responses: responses(limits),
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The key the operator issued you.' },
      },
    },
  });
}

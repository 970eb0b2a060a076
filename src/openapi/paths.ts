/**
 * The OpenAPI document's paths: one operation for each route of the endpoint table
 * (`src/endpoints.ts`), keyed by its operation id: the two send endpoints (premium as a
 * `oneOf` of its two forms), and the status and cancel endpoints, each with its request and
 * answer examples and the error answers it can give (responses.ts). The paths are built under the base path
 * the clients see, so a document served from any mount point names its real endpoints.
 *
 * A send's parameters, body media types and error answers are the tables below, shared
 * by both send endpoints: a new header or answer of a send is one more entry there.
 *
 * @module
 */
import { ENDPOINTS, type OperationId, type RoutePermission } from '../endpoints.js';
import type { RateLimitHeaders } from '../http/rate-limit/options.js';
import { callbacksOperation, replayOperation } from './callbacks-path.js';
import { listOperation, reportsOperation } from './list-path.js';
import { EXAMPLE_REF, header, json, pacingHeaders, ref, type Schema } from './refs.js';

/** The header parameters of a send, besides the API key (a security scheme). */
const SEND_PARAMETERS: Schema[] = [
  {
    name: 'Content-Encoding',
    in: 'header',
    required: false,
    description:
      'The body may be compressed; it is decompressed before the size limit and the JSON parser apply. ' +
      'Any other coding is refused with 415.',
    schema: { type: 'string', enum: ['identity', 'gzip', 'deflate', 'br'] },
  },
  {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Makes a retry safe: a later request of the same key with the same body (compared as parsed JSON, so key order and ' +
      'spacing do not matter) gets the first answer again, byte for byte, with `Idempotent-Replayed: true`, and sends and ' +
      'charges nothing. The key belongs to the API key\u2019s owner and holds for 24 hours by default. The same key with ' +
      'another body is refused with 422; while the first request is still being processed, with 409. Only a 200 answer ' +
      'is kept: after a refusal the key is still free. 1 to 255 visible ASCII characters, no spaces.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
    example: '8e03978e-40d5-43e8-bc93-6894a57f9324',
  },
];

/**
 * What a send body may be sent as, besides `application/json`: any JSON media type
 * (`application/<anything>+json`, e.g. `application/vnd.api+json`), in UTF-8.
 */
const JSON_SUFFIX_MEDIA = 'application/*+json';

const SEND_ERRORS = {
  '400': ref('responses', 'BadRequest'),
  '401': ref('responses', 'Unauthorized'),
  '402': ref('responses', 'PaymentRequired'),
  '403': ref('responses', 'Forbidden'),
  '405': ref('responses', 'MethodNotAllowed'),
  '409': ref('responses', 'IdempotencyInFlight'),
  '413': ref('responses', 'PayloadTooLarge'),
  '415': ref('responses', 'UnsupportedMediaType'),
  '422': ref('responses', 'Unprocessable'),
  '429': ref('responses', 'SendTooManyRequests'),
  '500': ref('responses', 'ServerError'),
  '503': ref('responses', 'ServiceUnavailable'),
};

/** A preview's error answers: a send's, but those of storing and charging (402, 409, 503). */
const PREVIEW_ERRORS = {
  '400': ref('responses', 'BadRequest'),
  '401': ref('responses', 'Unauthorized'),
  '403': ref('responses', 'Forbidden'),
  '405': ref('responses', 'MethodNotAllowed'),
  '413': ref('responses', 'PayloadTooLarge'),
  '415': ref('responses', 'UnsupportedMediaType'),
  '422': ref('responses', 'Unprocessable'),
  '429': ref('responses', 'TooManyRequests'),
  '500': ref('responses', 'ServerError'),
};

const STATUS_ERRORS = {
  '401': ref('responses', 'Unauthorized'),
  '403': ref('responses', 'Forbidden'),
  '405': ref('responses', 'MethodNotAllowed'),
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

/** What differs between the two send endpoints. */
interface SendEndpoint {
  summary: string;
  /** The request body's schema, and its examples. */
  body: Schema;
  examples: Record<string, unknown>;
  /** The schema of one accepted item of the 200 answer, and the answer's examples. */
  accepted: Schema;
  answer: Record<string, unknown>;
}

/** A send endpoint's operation: its body, its examples, its accepted items and the send errors. */
function sendOperation(endpoint: SendEndpoint, pacing: Record<string, unknown>): Record<string, unknown> {
  return {
    summary: endpoint.summary,
    description:
      'Stores every message of the request or none, and answers one item per message in request order. ' +
      'Each message later reaches one terminal state, reported to `dlr_callback_url` (see the `deliveryReport` webhook).',
    parameters: SEND_PARAMETERS,
    requestBody: {
      required: true,
      description:
        'JSON in UTF-8, as `application/json` or any `application/*+json` media type; a `charset` other than ' +
        'UTF-8 is refused with 415. The body may be compressed (`Content-Encoding: gzip`, `deflate` or `br`).',
      content: {
        ...json({ schema: endpoint.body, examples: endpoint.examples }),
        [JSON_SUFFIX_MEDIA]: { schema: endpoint.body },
      },
    },
    responses: {
      '200': {
        description:
          'Accepted: one item per message, in request order; or, with `Idempotent-Replayed: true`, the answer to the ' +
          'first request of the same `Idempotency-Key`, sent again.',
        headers: {
          ...pacing,
          'Idempotent-Replayed': header('`true` when the answer is the stored answer of an earlier request with the same `Idempotency-Key`; absent otherwise.', 'string'),
        },
        content: json({ schema: { type: 'array', items: endpoint.accepted }, examples: endpoint.answer }),
      },
      ...SEND_ERRORS,
    },
  };
}

/** A send's preview: the send's body, and one item per message saying what the send would do. */
function previewOperation(summary: string, send: SendEndpoint, pacing: Record<string, unknown>): Record<string, unknown> {
  return {
    summary,
    description:
      'Takes the body of the send and answers, per message, what the send would do: encoding and SMS units (and what ' +
      'smart encoding makes of the text), the credit units, the sender and route, whether an opt-out, a schedule or a ' +
      'validity period applies, and the error the send would answer for that message (same `code` and `details`). ' +
      'Stores, sends and charges nothing, and takes nothing from the message budget. An error of the whole request is ' +
      'answered as the send answers it.',
    requestBody: {
      required: true,
      content: { ...json({ schema: send.body, examples: send.examples }), [JSON_SUFFIX_MEDIA]: { schema: send.body } },
    },
    responses: {
      '200': {
        description: 'One item per message of the body, in its order.',
        ...withHeaders(pacing),
        content: json({ schema: { type: 'array', items: ref('schemas', 'PreviewItem') } }),
      },
      ...PREVIEW_ERRORS,
    },
  };
}

/** `{ headers }` when there are any, else nothing (an empty map is noise to a reader). */
function withHeaders(headers: Record<string, unknown>): { headers?: Record<string, unknown> } {
  return Object.keys(headers).length > 0 ? { headers } : {};
}

/** The path parameter of the endpoints about one message. */
const MESSAGE_REF_PARAMETER: Schema = {
  name: 'message_ref',
  in: 'path',
  required: true,
  description: 'The `message_ref` a send answered; any other value answers 404.',
  schema: { type: 'string', format: 'uuid' },
};

/** The query parameter of the endpoints about the messages of one reference. */
const EXTERNAL_ID_PARAMETER: Schema = {
  name: 'external_id',
  in: 'query',
  required: true,
  description: 'The `external_id` (or premium `message_id`) the caller sent with its messages.',
  schema: { type: 'string', minLength: 1 },
};

/** The 200 answer of both cancel endpoints. */
const CANCELLED_ANSWER = { description: 'What was cancelled, and what had already gone.', schema: ref('schemas', 'CancelResult') };

/** What differs between the endpoints that read or cancel the caller's messages. */
interface StatusEndpoint {
  summary: string;
  description?: string;
  /** The one parameter that names the messages: a ref in the path, or an external id in the query. */
  parameter: Schema;
  /** The 200 answer's description and body schema. */
  ok: { description: string; schema: Schema };
  /** Its own error answers, besides the ones every status endpoint gives. */
  errors: Record<string, unknown>;
}

/** An operation that reads or cancels the caller's messages: its parameter, its 200 answer and its errors. */
function statusOperation(endpoint: StatusEndpoint, pacing: Record<string, unknown>): Record<string, unknown> {
  return {
    summary: endpoint.summary,
    ...(endpoint.description === undefined ? {} : { description: endpoint.description }),
    parameters: [endpoint.parameter],
    responses: {
      '200': { description: endpoint.ok.description, ...withHeaders(pacing), content: json({ schema: endpoint.ok.schema }) },
      ...endpoint.errors,
      ...STATUS_ERRORS,
    },
  };
}

/** The document's tags, declared at its top level: each operation is under one. */
export const TAGS = [
  { name: 'Send', description: 'Store messages for sending; each later reaches one terminal state, reported to its `dlr_callback_url`.' },
  { name: 'Preview', description: 'What a send would do, message by message, without storing, sending or charging anything.' },
  { name: 'Status', description: 'Read the state of the caller’s own messages.' },
  { name: 'Cancel', description: 'Stop the caller’s own messages that have not gone to the carrier yet.' },
  { name: 'Callbacks', description: 'Find the caller’s delivery reports that failed or are still tried, and send failed ones again.' },
] as const;

/** The tag of each operation, by its operation id. */
const TAG_OF: Record<OperationId, (typeof TAGS)[number]['name']> = {
  quickSend: 'Send',
  premiumSend: 'Send',
  quickPreview: 'Preview',
  premiumPreview: 'Preview',
  getDeliveryStatus: 'Status',
  findByExternalId: 'Status',
  listMessages: 'Status',
  pullReports: 'Status',
  cancelMessage: 'Cancel',
  cancelByExternalId: 'Cancel',
  listCallbacks: 'Callbacks',
  replayCallbacks: 'Callbacks',
};

/** The quick send endpoint, for its operation and its preview's. */
const QUICK_SEND: SendEndpoint = {
  summary: 'Quick send',
  body: ref('schemas', 'QuickSendRequest'),
  examples: { quick: { summary: 'One message', value: QUICK_EXAMPLE } },
  accepted: ref('schemas', 'QuickAccepted'),
  answer: { quick: { value: [{ external_id: 'abc-1', recipient: '254712345678', sms_count: 1, message_ref: EXAMPLE_REF }] } },
};

/** The premium send endpoint, for its operation and its preview's. */
const PREMIUM_SEND: SendEndpoint = {
  summary: 'Premium (subscription, MT/MO) send',
  body: ref('schemas', 'PremiumSendRequest'),
  examples: {
    messages: { summary: 'Messages form', value: PREMIUM_MESSAGES_EXAMPLE },
    list: { summary: 'Parameter-list form', value: PREMIUM_LIST_EXAMPLE },
  },
  accepted: { oneOf: [ref('schemas', 'PremiumMessagesAccepted'), ref('schemas', 'PremiumListAccepted')] },
  answer: {
    messages: { value: [{ external_id: 'p-1', mobile_number: '254712345678', sms_count: 1, message_ref: EXAMPLE_REF }] },
    list: { value: [{ message_id: 'm-1', to: '254712345678', sms_count: 1, message_ref: EXAMPLE_REF }] },
  },
};

/** How each route of `ENDPOINTS` is described, by its operation id: its operation, given the pacing headers. */
const OPERATIONS: Record<OperationId, (pacing: Record<string, unknown>) => Record<string, unknown>> = {
  quickSend: (pacing) => sendOperation(QUICK_SEND, pacing),
  premiumSend: (pacing) => sendOperation(PREMIUM_SEND, pacing),
  quickPreview: (pacing) => previewOperation('Preview a quick send', QUICK_SEND, pacing),
  premiumPreview: (pacing) => previewOperation('Preview a premium send', PREMIUM_SEND, pacing),
  getDeliveryStatus: (pacing) =>
    statusOperation(
      {
        summary: 'Status of one of the caller\u2019s messages',
        description:
          'The message\u2019s state (its reason once terminal), its SMS units and submit attempts, and when it was ' +
          'accepted and last changed. A ref of another caller\u2019s message answers 404, as one that does not exist.',
        parameter: MESSAGE_REF_PARAMETER,
        ok: { description: 'The message.', schema: ref('schemas', 'MessageStatus') },
        errors: { '404': ref('responses', 'NotFound') },
      },
      pacing,
    ),
  findByExternalId: (pacing) =>
    statusOperation(
      {
        summary: 'The caller\u2019s messages with one reference, newest first (at most 100)',
        description:
          'Finds messages by the `external_id` (or premium `message_id`) the caller sent with them, for a client that ' +
          'lost the `message_ref` a send answered. Only the caller\u2019s own messages are searched.',
        parameter: EXTERNAL_ID_PARAMETER,
        ok: { description: 'The matches; an empty array when there are none.', schema: { type: 'array', items: ref('schemas', 'MessageStatus') } },
        errors: { '422': ref('responses', 'Unprocessable') },
      },
      pacing,
    ),
  listMessages: (pacing) => listOperation(pacing, STATUS_ERRORS),
  pullReports: (pacing) => reportsOperation(pacing, STATUS_ERRORS),
  listCallbacks: (pacing) => callbacksOperation(pacing, STATUS_ERRORS),
  replayCallbacks: (pacing) => replayOperation(pacing, STATUS_ERRORS),
  cancelMessage: (pacing) =>
    statusOperation(
      {
        summary: 'Cancel one of the caller\u2019s messages that has not gone yet',
        description:
          'A message still `scheduled`, or `queued` with nothing submitted and no worker about to submit it, ends ' +
          '`cancelled` (its delivery report is sent); any other is named in `not_cancelled` with its status.',
        parameter: MESSAGE_REF_PARAMETER,
        ok: CANCELLED_ANSWER,
        errors: { '404': ref('responses', 'NotFound') },
      },
      pacing,
    ),
  cancelByExternalId: (pacing) =>
    statusOperation(
      {
        summary: 'Cancel the caller\u2019s messages with one reference that have not gone yet (the newest 1000)',
        description:
          'Cancels, as the cancel by ref does, each of the caller\u2019s messages sent with this `external_id` (or premium ' +
          '`message_id`), the newest 1000; those already gone are named in `not_cancelled`. 404 when the caller has none.',
        parameter: EXTERNAL_ID_PARAMETER,
        ok: CANCELLED_ANSWER,
        errors: { '404': ref('responses', 'NotFound'), '422': ref('responses', 'Unprocessable') },
      },
      pacing,
    ),
};

/**
 * `paths`: every route of `ENDPOINTS` under `basePath` (no trailing slash), Express's
 * `:param` written as OpenAPI's `{param}`. With `rateLimit` `'always'`, their 200 answers
 * may carry the rate-limit headers too.
 */
export function apiPaths(basePath: string, rateLimit: RateLimitHeaders): Record<string, unknown> {
  const pacing = pacingHeaders(rateLimit);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ENDPOINTS) {
    const path = `${basePath}${route.path.replace(/:(\w+)/g, '{$1}')}`;
    paths[path] ??= {};
    const operation = OPERATIONS[route.operationId](pacing);
    const description = [operation.description as string | undefined, SCOPE_NOTES[route.scope]].filter((text) => text !== undefined).join('\n\n');
    paths[path][route.method.toLowerCase()] = { operationId: route.operationId, tags: [TAG_OF[route.operationId]], ...operation, description };
  }
  return paths;
}

/** What each route's key must be granted, as its operation's description ends. */
const SCOPE_NOTES: Record<RoutePermission, string> = {
  'send:quick': 'The key needs the `send:quick` scope (or `quick`); 403 `SCOPE_DENIED` without it.',
  'send:premium': 'The key needs the `send:premium` scope (or `premium`); 403 `SCOPE_DENIED` without it.',
  read: 'The key needs the `read` scope (`quick` and `premium` grant it too); 403 `READ_SCOPE_DENIED` without it.',
  cancel: 'The key needs the `cancel` scope (`quick` and `premium` grant it too); 403 `CANCEL_SCOPE_DENIED` without it.',
  preview: 'The key needs the `preview` scope (`quick` and `premium` grant it too); 403 `PREVIEW_SCOPE_DENIED` without it.',
  callbacks: 'The key needs the `callbacks` scope (a key without `scopes` has it; `quick` and `premium` do not grant it); 403 `CALLBACKS_SCOPE_DENIED` without it.',
};

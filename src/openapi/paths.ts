/**
 * The OpenAPI document's paths: the two send endpoints (premium as a `oneOf` of its two
 * forms) and the two status endpoints, each with its request and answer examples and the
 * error answers it can give (responses.ts). The paths are built under the base path the
 * clients see, so a document served from any mount point names its real endpoints.
 *
 * @module
 */
import { EXAMPLE_REF, json, ref, type Schema } from './refs.js';

const SEND_ERRORS = {
  '400': ref('responses', 'BadRequest'),
  '401': ref('responses', 'Unauthorized'),
  '403': ref('responses', 'Forbidden'),
  '413': ref('responses', 'PayloadTooLarge'),
  '415': ref('responses', 'UnsupportedMediaType'),
  '422': ref('responses', 'Unprocessable'),
  '429': ref('responses', 'SendTooManyRequests'),
  '500': ref('responses', 'ServerError'),
  '503': ref('responses', 'ServiceUnavailable'),
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

/** A send endpoint's path item: its body, its examples, its accepted items and the send errors. */
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

/** `paths`: the four endpoints under `basePath` (no trailing slash). */
export function apiPaths(basePath: string): Record<string, unknown> {
  return {
    [`${basePath}/create`]: sendOperation(
      'quickSend',
      'Quick send',
      ref('schemas', 'QuickSendRequest'),
      { quick: { summary: 'One message', value: QUICK_EXAMPLE } },
      ref('schemas', 'QuickAccepted'),
      { quick: { value: [{ external_id: 'abc-1', recipient: '254712345678', sms_count: 1, message_ref: EXAMPLE_REF }] } },
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
        messages: { value: [{ external_id: 'p-1', mobile_number: '254712345678', sms_count: 1, message_ref: EXAMPLE_REF }] },
        list: { value: [{ message_id: 'm-1', to: '254712345678', sms_count: 1, message_ref: EXAMPLE_REF }] },
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

/**
 * The OpenAPI document's webhook: the delivery report the service POSTs to a request's
 * `dlr_callback_url`, with its Standard Webhooks headers and what each answer means to the
 * sender. It needs no API key: the service is the caller here.
 *
 * @module
 */
import { STATUS_DESCRIPTIONS } from '../lifecycle/states.js';
import { EXAMPLE_REF, json, ref } from './refs.js';

/** `webhooks`: the delivery report. Shared data: the document is cloned before it is handed out. */
export const WEBHOOKS = {
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
                  message_ref: EXAMPLE_REF,
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

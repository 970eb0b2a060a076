/**
 * The OpenAPI document's webhooks: the delivery report the service POSTs to a request's
 * `dlr_callback_url`, and the inbound (MO) message it POSTs to the owner's inbound URL, with
 * their Standard Webhooks headers and what each answer means to the sender. They need no API
 * key: the service is the caller here.
 *
 * @module
 */
import { STATUS_DESCRIPTIONS } from '../lifecycle/states.js';
import { EXAMPLE_REF, json, ref } from './refs.js';

/** The Standard Webhooks headers of a webhook about a `what`, and its trace context. */
function webhookHeaders(what: string) {
  return [
    { name: 'webhook-id', in: 'header', required: false, description: `The ${what}\u2019s \`uid\`.`, schema: { type: 'string' } },
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
    {
      name: 'traceparent',
      in: 'header',
      required: false,
      description:
        'W3C Trace Context of this attempt, when the service traces its messages (OpenTelemetry): continue the ' +
        'message\u2019s trace from it. Not covered by the signature.',
      schema: { type: 'string', pattern: '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' },
    },
  ];
}

/** The example report's envelope fields, the same in both formats. */
const REPORT_HEAD = {
  uid: '0b8f7c1e-2d4a-4f5b-8c6d-7e9f0a1b2c3d',
  actor_type: 'system',
  event_type: 'sms_delivery_status',
  created_at: '1594868435',
} as const;

/** The example report's fields about the message: under `data` in the envelope, at the top level when flat. */
const REPORT_DATA = {
  external_id: 'abc-1',
  message_ref: EXAMPLE_REF,
  recipient: '254712345678',
  status: 'delivered',
  status_reason: 'delivered_to_terminal',
  status_description: STATUS_DESCRIPTIONS.delivered_to_terminal,
  sms_count: 1,
} as const;

/** `webhooks`: the delivery report and the inbound message. Shared data: the document is cloned before it is handed out. */
export const WEBHOOKS = {
  deliveryReport: {
    post: {
      operationId: 'deliveryReport',
      summary: 'Delivery report, POSTed to the request\u2019s `dlr_callback_url`',
      description:
        'Sent once a message reaches a terminal state. Any 2xx answer ends it; anything else is retried on a ' +
        'schedule that spans hours, with the same `uid`, so delivery is at-least-once. Redirects are not followed. ' +
        'When a secret is configured the report is signed by the Standard Webhooks scheme. The body is in its ' +
        'principal\u2019s `reportFormat`: the `envelope` (the default, the provider\u2019s published shape) or `flat` ' +
        '(the same fields at the top level, with `reason`); either is signed as sent.',
      security: [],
      parameters: webhookHeaders('report'),
      requestBody: {
        required: true,
        content: json({
          schema: { oneOf: [ref('schemas', 'DeliveryReport'), ref('schemas', 'FlatDeliveryReport')] },
          examples: {
            delivered: {
              value: { ...REPORT_HEAD, data: REPORT_DATA },
            },
            flat: {
              summary: 'The same report for a principal with `reportFormat: \'flat\'`',
              value: { ...REPORT_HEAD, ...REPORT_DATA, reason: STATUS_DESCRIPTIONS.delivered_to_terminal },
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
  inboundMessage: {
    post: {
      operationId: 'inboundMessage',
      summary: 'Inbound (MO) message, POSTed to the short code owner\u2019s inbound URL',
      description:
        'Sent when a subscriber\u2019s message to a short code arrives (premium MO), to the `inboundUrl` of the profile ' +
        'owning the code, else of its principal. Retried, signed and guarded exactly as delivery reports are. A whole ' +
        'text that is a stop keyword (`STOP`, ...) also opts the sender out of the short code; START opts back in.',
      security: [],
      parameters: webhookHeaders('webhook'),
      requestBody: {
        required: true,
        content: json({
          schema: ref('schemas', 'InboundMessage'),
          examples: {
            reply: {
              value: {
                uid: '5d0c2f9a-7b1e-4c3d-9e8f-0a1b2c3d4e5f',
                actor_type: 'system',
                event_type: 'sms_inbound',
                created_at: '1594868500',
                data: {
                  message_ref: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
                  from: '254712345678',
                  to: '22021501',
                  message: 'YES please',
                  profile_code: '22021501',
                  received_at: '1594868500',
                },
              },
            },
          },
        }),
      },
      responses: {
        '2XX': { description: 'Received; the message is not sent again.' },
        default: { description: 'Not received; it is retried (410 Gone stops it).' },
      },
    },
  },
};

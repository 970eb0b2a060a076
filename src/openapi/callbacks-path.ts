/**
 * The OpenAPI operations of webhook recovery (delivery reports and inbound webhooks),
 * `GET {base}/callbacks` and `POST {base}/callbacks/replay`, with the schemas of their answers
 * and body. Kept apart from
 * paths.ts, which joins them with the other routes.
 *
 * @module
 */
import { MAX_REPLAY_IDS } from '../http/callbacks.js';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../http/list-query.js';
import { OPEN_CALLBACK_STATES } from '../storage/callback-list.js';
import { parameter } from './list-path.js';
import { json, ref, type Schema } from './refs.js';

/** The schemas of webhook recovery, for `components.schemas`. */
export const CALLBACK_SCHEMAS: Record<string, Schema> = {
  CallbackItem: {
    type: 'object',
    required: ['kind', 'message_ref', 'status', 'created_at', 'updated_at', 'callback'],
    properties: {
      kind: { type: 'string', enum: ['report'], description: 'What is delivered: `report`, a message\u2019s delivery report.' },
      message_ref: { type: 'string', description: 'The message the report is on: the id a replay names.' },
      status: { type: 'string', description: 'The message\u2019s state, as the status lookup answers it.' },
      created_at: { type: 'string', format: 'date-time', description: 'When the message was accepted (what `since` and `until` filter by).' },
      updated_at: { type: 'string', format: 'date-time', description: 'When the message last changed (its end).' },
      callback: ref('schemas', 'CallbackDelivery'),
    },
  },
  InboundCallbackItem: {
    type: 'object',
    required: ['kind', 'message_ref', 'from', 'to', 'received_at', 'callback'],
    properties: {
      kind: { type: 'string', enum: ['inbound'], description: 'What is delivered: `inbound`, an inbound (MO) message’s webhook.' },
      message_ref: { type: 'string', description: 'The inbound message (the webhook’s `data.message_ref`): the id a replay names.' },
      from: { type: 'string', description: 'The subscriber’s number, international digits.' },
      to: { type: 'string', description: 'The short code (or number) it was sent to.' },
      received_at: { type: 'string', format: 'date-time', description: 'When it arrived (what `since` and `until` filter by).' },
      callback: ref('schemas', 'CallbackDelivery'),
    },
  },
  CallbackDelivery: {
    type: 'object',
    required: ['url', 'state', 'attempts', 'last_status_code', 'last_error', 'next_attempt_at'],
    properties: {
      url: { type: 'string', description: 'Where the report (or inbound webhook) is posted.' },
      state: { type: 'string', enum: [...OPEN_CALLBACK_STATES] },
      attempts: { type: 'integer', minimum: 0, description: 'Attempts made so far, replays included.' },
      last_status_code: { type: ['integer', 'null'], description: 'The HTTP status of the last attempt, `null` when none answered.' },
      last_error: { type: ['string', 'null'], description: 'Why the last attempt failed (`HTTP 500`, a network error, a timeout).' },
      next_attempt_at: { type: ['string', 'null'], format: 'date-time', description: 'When the next attempt is due, while pending.' },
    },
  },
  CallbackPage: {
    type: 'object',
    required: ['callbacks', 'next'],
    properties: {
      callbacks: {
        type: 'array',
        items: { oneOf: [ref('schemas', 'CallbackItem'), ref('schemas', 'InboundCallbackItem')] },
        description: 'The page\u2019s webhooks, all of the `kind` asked for: reports newest accepted message first, inbound webhooks newest arrival first.',
      },
      next: { type: ['string', 'null'], description: 'The cursor of the next page (send it as `cursor`), or `null` on the last page.' },
    },
  },
  ReplayRequest: {
    type: 'object',
    additionalProperties: false,
    description: 'Either `ids`, or `since` and/or `until`; `kind` with either.',
    properties: {
      kind: {
        type: 'string',
        enum: ['report', 'inbound'],
        description: 'Which webhooks: delivery reports or inbound (MO) webhooks. Absent: both for `ids` (a ref names one of either), `report` for a time range.',
      },
      since: { type: 'string', format: 'date-time', description: 'Replay failed webhooks of messages accepted (inbound: received) at or after this time.' },
      until: { type: 'string', format: 'date-time', description: 'Replay failed webhooks of messages accepted (inbound: received) before this time.' },
      ids: { type: 'array', minItems: 1, maxItems: MAX_REPLAY_IDS, items: { type: 'string', minLength: 1 }, description: 'The `message_ref`s (of messages or inbound messages) whose failed webhooks to replay.' },
    },
  },
  ReplayAccepted: {
    type: 'object',
    required: ['queued'],
    properties: { queued: { type: 'integer', minimum: 0, description: 'How many failed webhooks were made pending again.' } },
  },
};

/** The operation of `GET {base}/callbacks`, with `pacing` (the rate-limit headers a 200 may carry) and `errors` (those every read endpoint gives). */
export function callbacksOperation(pacing: Record<string, unknown>, errors: Record<string, unknown>): Record<string, unknown> {
  return {
    summary: 'The caller\u2019s pending or failed delivery reports or inbound webhooks, with their attempts',
    description:
      'Lists the delivery reports of the caller\u2019s messages that are still being tried (`pending`) or were given up ' +
      'on (`failed`), newest accepted message first, with their attempts, in pages of `limit` (`next`, as the message list ' +
      'pages). Delivered reports are not listed. With `kind=inbound`, the caller\u2019s inbound (MO) webhooks instead, newest ' +
      'arrival first, paged by their own cursor. An unknown or repeated parameter, or a bad value, answers 422 ' +
      '`INVALID_LIST_QUERY`; a cursor this endpoint did not give, 400 `INVALID_CURSOR`.',
    parameters: [
      parameter('kind', 'Which webhooks: `report` (the default) or `inbound` (inbound MO webhooks; a storage without inbound recovery answers 422).', {
        type: 'string',
        enum: ['report', 'inbound'],
        default: 'report',
      }),
      parameter('state', `Only reports in one of these states, separated by commas: ${OPEN_CALLBACK_STATES.join(', ')}.`, { type: 'string', example: 'failed' }),
      parameter('since', 'Only reports on messages accepted at or after this time (RFC 3339).', { type: 'string', format: 'date-time' }),
      parameter('until', 'Only reports on messages accepted before this time (RFC 3339); must be later than `since`.', { type: 'string', format: 'date-time' }),
      parameter('limit', `Most reports on the page (default ${DEFAULT_LIST_LIMIT}).`, { type: 'integer', minimum: 1, maximum: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT }),
      parameter('cursor', 'The `next` of the page before, as it came. Send the same filters with it.', { type: 'string' }),
    ],
    responses: {
      '200': {
        description: 'One page of reports.',
        ...(Object.keys(pacing).length > 0 ? { headers: pacing } : {}),
        content: json({ schema: ref('schemas', 'CallbackPage') }),
      },
      '400': ref('responses', 'BadListCursor'),
      '422': ref('responses', 'BadListQuery'),
      ...errors,
    },
  };
}

/** The operation of `POST {base}/callbacks/replay`, as {@link callbacksOperation} takes its arguments. */
export function replayOperation(pacing: Record<string, unknown>, errors: Record<string, unknown>): Record<string, unknown> {
  return {
    summary: 'Send the caller\u2019s failed delivery reports or inbound webhooks again',
    description:
      'Makes the caller\u2019s failed reports pending again: those of the messages named in `ids`, or of the messages ' +
      'accepted between `since` and `until`. Each is sent as a new attempt with its retry schedule started anew, signed ' +
      'at that attempt\u2019s time (a new `webhook-timestamp` and `webhook-signature`, the same `webhook-id`), and an ' +
      'endpoint paused for failing too long is resumed. Pending and delivered reports are left as they are. Answers how ' +
      'many were queued. Inbound (MO) webhooks alike: named by their `message_ref` in `ids`, or with `kind: inbound` for a ' +
      'range of arrival.',
    requestBody: { required: true, content: json({ schema: ref('schemas', 'ReplayRequest'), examples: { range: { value: { since: '2026-01-31T14:00:00Z', until: '2026-01-31T15:00:00Z' } }, ids: { value: { ids: ['msg_2kq8v6n1'] } } } }) },
    responses: {
      '200': {
        description: 'The reports queued again.',
        ...(Object.keys(pacing).length > 0 ? { headers: pacing } : {}),
        content: json({ schema: ref('schemas', 'ReplayAccepted') }),
      },
      '400': ref('responses', 'BadRequest'),
      '413': ref('responses', 'PayloadTooLarge'),
      '415': ref('responses', 'UnsupportedMediaType'),
      '422': {
        description: 'The body names neither `ids` nor a time range, both, or a bad value; `details` names the field.',
        ...(Object.keys(pacing).length > 0 ? { headers: pacing } : {}),
        content: json({ schema: ref('schemas', 'Error'), examples: { INVALID_REPLAY: { summary: 'INVALID_REPLAY', value: { details: 'ids: must be a list of 1 to 1000 message refs', code: 'INVALID_REPLAY' } } } }),
      },
      ...errors,
    },
  };
}

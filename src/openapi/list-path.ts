/**
 * The OpenAPI operation of `GET {base}/messages` (the message list): its query parameters,
 * its page and its errors. Kept apart from paths.ts, which joins it with the other routes.
 *
 * @module
 */
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../http/list-query.js';
import { PENDING_STATES, TERMINAL_STATES } from '../lifecycle/states.js';
import { json, ref, type Schema } from './refs.js';

/** A query parameter of a list. */
export const parameter = (name: string, description: string, schema: Schema): Schema => ({ name, in: 'query', required: false, description, schema });

/** The list's query parameters. */
const LIST_PARAMETERS: Schema[] = [
  parameter(
    'state',
    `Only messages in one of these states, separated by commas (\`failed,undelivered\`): ${[...PENDING_STATES, ...TERMINAL_STATES].join(', ')}.`,
    { type: 'string', example: 'failed,undelivered' },
  ),
  parameter('since', 'Only messages accepted at or after this time (RFC 3339).', { type: 'string', format: 'date-time' }),
  parameter('until', 'Only messages accepted before this time (RFC 3339); must be later than `since`.', { type: 'string', format: 'date-time' }),
  parameter('recipient', 'Only messages to this number, in international format (`254712345678`; a leading `+` is read too).', { type: 'string' }),
  parameter('external_id', 'Only messages sent with this `external_id` (or premium `message_id`), exactly.', { type: 'string', minLength: 1 }),
  parameter('profile_code', 'Only messages sent under this profile.', { type: 'string', minLength: 1 }),
  parameter('limit', `Most messages on the page (default ${DEFAULT_LIST_LIMIT}).`, { type: 'integer', minimum: 1, maximum: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT }),
  parameter(
    'cursor',
    'The `next` of the page before, as it came: the page starts after that page\u2019s last message. Send the same filters with it.',
    { type: 'string' },
  ),
];

/** The list's operation, with `pacing` (the rate-limit headers a 200 may carry) and `errors` (those every read endpoint gives). */
export function listOperation(pacing: Record<string, unknown>, errors: Record<string, unknown>): Record<string, unknown> {
  return {
    summary: 'The caller\u2019s messages, newest first, filtered and paged',
    description:
      'Lists the caller\u2019s own messages, newest accepted first, each as the status lookup answers it, in pages of ' +
      '`limit`. `next` is the cursor of the following page (`null` on the last): messages accepted while a client pages ' +
      'are on a new first page, never on a later one, and no message is on two pages. Filters combine (all must match). ' +
      'An unknown or repeated parameter, or a bad value, answers 422 `INVALID_LIST_QUERY`; a cursor this endpoint did not ' +
      'give, 400 `INVALID_CURSOR`.',
    parameters: LIST_PARAMETERS,
    responses: {
      '200': {
        description: 'One page of messages.',
        ...(Object.keys(pacing).length > 0 ? { headers: pacing } : {}),
        content: json({ schema: ref('schemas', 'MessagePage') }),
      },
      '400': ref('responses', 'BadListCursor'),
      '422': ref('responses', 'BadListQuery'),
      ...errors,
    },
  };
}

/** The operation of `GET {base}/reports` (pulled delivery reports), as {@link listOperation} takes its arguments. */
export function reportsOperation(pacing: Record<string, unknown>, errors: Record<string, unknown>): Record<string, unknown> {
  return {
    summary: 'The caller\u2019s delivery reports, in the order they were made, from a cursor',
    description:
      'Every delivery report of the caller\u2019s messages (one per message that ended, whether it has a `dlr_callback_url` ' +
      'or not), in the order they were made, each exactly the body its callback carries (or would carry), from the one ' +
      'after `after`. Keep `next` and send it as `after` on the next request: every report comes once, across restarts ' +
      'and instances. With no new report, `next` is the `after` sent (`null` before the first report).',
    parameters: [
      parameter('after', 'The `next` of the answer before, as it came; absent: from the first report.', { type: 'string' }),
      parameter('limit', `Most reports in the answer (default ${DEFAULT_LIST_LIMIT}).`, { type: 'integer', minimum: 1, maximum: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT }),
    ],
    responses: {
      '200': {
        description: 'The reports made after `after`, oldest first.',
        ...(Object.keys(pacing).length > 0 ? { headers: pacing } : {}),
        content: json({ schema: ref('schemas', 'ReportPage') }),
      },
      '400': ref('responses', 'BadListCursor'),
      '422': ref('responses', 'BadListQuery'),
      ...errors,
    },
  };
}

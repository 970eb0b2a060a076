/**
 * The query of `GET {base}/messages` read and checked (filters, page size, cursor), and the
 * opaque cursor written into each page: bad input is a coded 4xx, never a storage call.
 *
 * @module
 */
import { parse as parseQuery } from 'node:querystring';
import type { Request } from 'express';
import { SmsError } from '../errors.js';
import { PENDING_STATES, TERMINAL_STATES, type MessageState } from '../lifecycle/states.js';
import type { ListPosition, MessageListQuery } from '../storage/message-list.js';
import { parseRfc3339 } from '../util/rfc3339.js';

/** Messages on a page when the request names no `limit`. */
export const DEFAULT_LIST_LIMIT = 100;

/** Most messages on one page (`limit`). */
export const MAX_LIST_LIMIT = 1000;

/** Every state, in lifecycle order. */
const STATES: readonly MessageState[] = [...PENDING_STATES, ...TERMINAL_STATES];

/** The query parameters the endpoint reads; any other is refused, so a typo is not a silent "no filter". */
const PARAMETERS = ['state', 'since', 'until', 'recipient', 'external_id', 'profile_code', 'limit', 'cursor'] as const;

/** What a cursor's text starts with: its format, so a later one can be told apart. */
const CURSOR_FORMAT = 'v1';

/** The cursor of the page starting after `position`: opaque text a client sends back as `cursor`. */
export function encodeCursor(position: ListPosition): string {
  return Buffer.from(`${CURSOR_FORMAT}.${position.createdAt}.${position.seq}`, 'utf8').toString('base64url');
}

/** The position a cursor names; throws `INVALID_CURSOR` for a text this endpoint did not give. */
function decodeCursor(text: string): ListPosition {
  const parts = /^[A-Za-z0-9_-]{1,200}$/.test(text) ? Buffer.from(text, 'base64url').toString('utf8').split('.') : [];
  const [format, createdAt, seq] = parts;
  const isInteger = (part: string | undefined) => part !== undefined && /^-?\d{1,16}$/.test(part) && Number.isSafeInteger(Number(part));
  if (parts.length !== 3 || format !== CURSOR_FORMAT || !isInteger(createdAt) || !isInteger(seq)) throw new SmsError('INVALID_CURSOR');
  return { createdAt: Number(createdAt), seq: Number(seq) };
}

/** A 422 naming the parameter at fault. */
const invalid = (details: string) => new SmsError('INVALID_LIST_QUERY', details);

/** The query string of `req`, read as `node:querystring` does (as the status lookup reads its own: status.ts). */
function rawQuery(req: Request): Record<string, string | string[] | undefined> {
  const url = req.url;
  const start = url.indexOf('?');
  if (start === -1) return {};
  const end = url.indexOf('#', start);
  return parseQuery(url.slice(start + 1, end === -1 ? undefined : end));
}

/** An RFC 3339 time parameter as epoch ms. */
function timeOf(name: string, text: string): number {
  const ms = parseRfc3339(text);
  if (Number.isNaN(ms)) throw invalid(`${name}: must be an RFC 3339 date-time (2026-01-31T14:00:00Z)`);
  return ms;
}

/**
 * The page a `GET {base}/messages` asks for, for `principalId`, or `null` when a filter
 * holds a U+0000 (no stored text has one, and PostgreSQL would refuse the lookup): the
 * answer is then an empty page.
 */
export function readListQuery(req: Request, principalId: string): MessageListQuery | null {
  const raw = rawQuery(req);
  const given: Partial<Record<(typeof PARAMETERS)[number], string>> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (!(PARAMETERS as readonly string[]).includes(name)) throw invalid(`${name}: is not a parameter of this endpoint (${PARAMETERS.join(', ')})`);
    if (typeof value !== 'string') throw invalid(`${name}: give it once`);
    given[name as (typeof PARAMETERS)[number]] = value;
  }
  const query: MessageListQuery = { principalId, limit: DEFAULT_LIST_LIMIT };
  if (given.limit !== undefined) {
    if (!/^\d{1,4}$/.test(given.limit) || Number(given.limit) < 1 || Number(given.limit) > MAX_LIST_LIMIT) {
      throw invalid(`limit: must be a whole number from 1 to ${MAX_LIST_LIMIT}`);
    }
    query.limit = Number(given.limit);
  }
  if (given.state !== undefined) {
    const states = given.state.split(',').map((state) => state.trim());
    const unknown = states.find((state) => !(STATES as readonly string[]).includes(state));
    if (unknown !== undefined) throw invalid(`state: must be one or more of ${STATES.join(', ')}, separated by commas`);
    query.states = [...new Set(states as MessageState[])];
  }
  if (given.since !== undefined) query.since = timeOf('since', given.since);
  if (given.until !== undefined) query.until = timeOf('until', given.until);
  if (query.since !== undefined && query.until !== undefined && query.since >= query.until) throw invalid('since: must be before until');
  if (given.recipient !== undefined) {
    // As stored: international digits, without `+` or the separators people write.
    const digits = given.recipient.replace(/[\s().-]/g, '').replace(/^\+/, '');
    if (!/^\d{1,32}$/.test(digits)) throw invalid('recipient: must be a number in international format (254712345678 or +254712345678)');
    query.recipient = digits;
  }
  for (const [name, field] of [['external_id', 'externalId'], ['profile_code', 'profileCode']] as const) {
    const value = given[name];
    if (value === undefined) continue;
    if (value === '') throw invalid(`${name}: must not be empty`);
    query[field] = value;
  }
  if (given.cursor !== undefined) query.after = decodeCursor(given.cursor);
  if (query.externalId?.includes('\u0000') === true || query.profileCode?.includes('\u0000') === true) return null;
  return query;
}

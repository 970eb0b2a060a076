/**
 * The query of `GET {base}/messages` read and checked (filters, page size, cursor), and the
 * opaque cursor written into each page: bad input is a coded 4xx, never a storage call. The
 * page's bounds are read the same way by every list of the caller's messages
 * ({@link readPageQuery}: `GET {base}/callbacks` too).
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

/** The query parameters the endpoint reads. */
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
export const invalid = (details: string) => new SmsError('INVALID_LIST_QUERY', details);

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

/** The page bounds every list reads: its size, its acceptance times and its cursor. */
export interface PageBounds {
  /** Most items on the page. */
  limit: number;
  /** Accepted at or after, epoch ms. */
  since?: number;
  /** Accepted before, epoch ms. */
  until?: number;
  /** The position the page starts after. */
  after?: ListPosition;
}

/**
 * The parameters of a list's query string, each given once and each one of `parameters`
 * (any other is refused, so a typo is not a silent "no filter"), with the page bounds read
 * from `limit`, `since`, `until` and `cursor`: a coded 4xx for a bad one.
 */
export function readPageQuery<Name extends string>(req: Request, parameters: readonly Name[]): { given: Partial<Record<Name, string>>; bounds: PageBounds } {
  const given: Partial<Record<Name, string>> = {};
  for (const [name, value] of Object.entries(rawQuery(req))) {
    if (!(parameters as readonly string[]).includes(name)) throw invalid(`${name}: is not a parameter of this endpoint (${parameters.join(', ')})`);
    if (typeof value !== 'string') throw invalid(`${name}: give it once`);
    given[name as Name] = value;
  }
  const text = given as Partial<Record<string, string>>;
  const bounds: PageBounds = { limit: DEFAULT_LIST_LIMIT };
  if (text.limit !== undefined) {
    if (!/^\d{1,4}$/.test(text.limit) || Number(text.limit) < 1 || Number(text.limit) > MAX_LIST_LIMIT) {
      throw invalid(`limit: must be a whole number from 1 to ${MAX_LIST_LIMIT}`);
    }
    bounds.limit = Number(text.limit);
  }
  Object.assign(bounds, readTimeRange(text));
  if (text.cursor !== undefined) bounds.after = decodeCursor(text.cursor);
  return { given, bounds };
}

/** `since` and `until` of a query or a body, as epoch ms; a coded 422 for a bad one, or a `since` not before `until`. */
export function readTimeRange(given: { since?: unknown; until?: unknown }): { since?: number; until?: number } {
  const range: { since?: number; until?: number } = {};
  for (const name of ['since', 'until'] as const) {
    const value = given[name];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw invalid(`${name}: must be an RFC 3339 date-time (2026-01-31T14:00:00Z)`);
    range[name] = timeOf(name, value);
  }
  if (range.since !== undefined && range.until !== undefined && range.since >= range.until) throw invalid('since: must be before until');
  return range;
}

/**
 * The page a `GET {base}/messages` asks for, for `principalId`, or `null` when a filter
 * holds a U+0000 (no stored text has one, and PostgreSQL would refuse the lookup): the
 * answer is then an empty page.
 */
export function readListQuery(req: Request, principalId: string): MessageListQuery | null {
  const { given, bounds } = readPageQuery(req, PARAMETERS);
  const query: MessageListQuery = { principalId, ...bounds };
  if (given.state !== undefined) {
    const states = given.state.split(',').map((state) => state.trim());
    const unknown = states.find((state) => !(STATES as readonly string[]).includes(state));
    if (unknown !== undefined) throw invalid(`state: must be one or more of ${STATES.join(', ')}, separated by commas`);
    query.states = [...new Set(states as MessageState[])];
  }
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
  if (query.externalId?.includes('\u0000') === true || query.profileCode?.includes('\u0000') === true) return null;
  return query;
}

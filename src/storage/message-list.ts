/**
 * Listing a principal's messages (`GET {base}/messages`): the query the router asks storage
 * ({@link MessageListQuery}) and the page it gets back ({@link MessageListPage}), part of the
 * storage contract (exported with `Storage`). Pages are read by keyset, newest first: a page
 * starts strictly after the last message of the page before ({@link ListPosition}), so a
 * message stored while a client pages never shifts, repeats or hides the later pages.
 *
 * @module
 */
import type { MessageState } from '../lifecycle/states.js';
import type { MessageRecord } from './message-record.js';

/**
 * A message's place in every list: its `createdAt` (when it was accepted), then its
 * insertion order (`seq`, which a record store gives each row). Lists run newest first: the
 * greater `createdAt`, then the greater `seq`.
 */
export interface ListPosition {
  /** The message's `createdAt`, epoch ms. */
  createdAt: number;
  /** Its insertion order among the stored messages (the row's `seq`). */
  seq: number;
}

/** Which of a principal's messages a list holds: every filter given must match. */
export interface MessageListFilter {
  /** Whose messages: a list never holds another principal's. */
  principalId: string;
  /** Only messages in one of these states (absent or empty: any state). */
  states?: readonly MessageState[];
  /** Only messages to this recipient, as stored (international digits, no `+`). */
  recipient?: string;
  /** Only messages with this external id (exactly, case-sensitive). */
  externalId?: string;
  /** Only messages sent under this profile. */
  profileCode?: string;
  /** Only messages accepted at or after this time (`createdAt >= since`), epoch ms. */
  since?: number;
  /** Only messages accepted before this time (`createdAt < until`), epoch ms. */
  until?: number;
}

/** One page of a list: the filter, where it starts, and how many at most. */
export interface MessageListQuery extends MessageListFilter {
  /** Start strictly after (older than) this position; absent: at the newest. */
  after?: ListPosition;
  /** Most messages on the page, at least 1. */
  limit: number;
}

/** One page of a principal's messages, newest first. */
export interface MessageListPage {
  /** The matching messages, newest first, at most the query's `limit`. */
  messages: MessageRecord[];
  /** Where the next page starts (the last message's position), or `null` when no message follows. */
  next: ListPosition | null;
}

/** Whether the row at `position` comes after (is older than) `after` in a list: smaller `createdAt`, then smaller `seq`. */
export function isAfter(position: ListPosition, after: ListPosition): boolean {
  return position.createdAt < after.createdAt || (position.createdAt === after.createdAt && position.seq < after.seq);
}

/** Whether `record` (with its insertion order) matches every filter of `filter`. */
export function matchesFilter(record: MessageRecord, filter: MessageListFilter): boolean {
  if (record.principalId !== filter.principalId) return false;
  if (filter.states !== undefined && filter.states.length > 0 && !filter.states.includes(record.state)) return false;
  if (filter.recipient !== undefined && record.recipient !== filter.recipient) return false;
  if (filter.externalId !== undefined && record.externalId !== filter.externalId) return false;
  if (filter.profileCode !== undefined && record.profileCode !== filter.profileCode) return false;
  if (filter.since !== undefined && record.createdAt < filter.since) return false;
  if (filter.until !== undefined && record.createdAt >= filter.until) return false;
  return true;
}

/**
 * Listing and replaying a principal's delivery reports by their state (`GET {base}/callbacks`,
 * `POST {base}/callbacks/replay`): the queries the router asks storage, part of the storage
 * contract (exported with `Storage`). A report lives on its message's record
 * (`record.callback`), so its list runs in the message list's order and is paged by the same
 * keyset ({@link ListPosition}): newest accepted first.
 *
 * @module
 */
import type { MessageRecord } from './message-record.js';
import type { ListPosition, MessageListPage } from './message-list.js';

/** The report states a callback list filters by: those a support desk acts on. */
export type OpenCallbackState = 'pending' | 'failed';

/** Every {@link OpenCallbackState}, in the order the docs list them. */
export const OPEN_CALLBACK_STATES: readonly OpenCallbackState[] = ['failed', 'pending'];

/** Which of a principal's reports a callback list holds: every filter given must match. */
export interface CallbackListFilter {
  /** Whose reports: a list never holds another principal's. */
  principalId: string;
  /** Only reports in one of these states (absent or empty: pending and failed). */
  states?: readonly OpenCallbackState[];
  /** Only reports on messages accepted at or after this time (`createdAt >= since`), epoch ms. */
  since?: number;
  /** Only reports on messages accepted before this time (`createdAt < until`), epoch ms. */
  until?: number;
}

/** One page of a callback list: the filter, where it starts, and how many at most. */
export interface CallbackListQuery extends CallbackListFilter {
  /** Start strictly after (older than) this position; absent: at the newest. */
  after?: ListPosition;
  /** Most reports on the page, at least 1. */
  limit: number;
}

/** Which failed reports a replay sends again: a time range of acceptance, or the refs of their messages. */
export type ReplaySelection =
  | { principalId: string; since?: number; until?: number }
  | { principalId: string; refs: readonly string[] };

/** The state a record's report is listed under, or `null` when it is on no callback list (none, or delivered). */
export function openCallbackState(record: MessageRecord): OpenCallbackState | null {
  const state = record.callback?.state;
  return state === 'pending' || state === 'failed' ? state : null;
}

/** The states `filter` asks for: its own, or both when it names none. */
export function statesOf(filter: CallbackListFilter): readonly OpenCallbackState[] {
  return filter.states === undefined || filter.states.length === 0 ? OPEN_CALLBACK_STATES : [...new Set(filter.states)];
}

/**
 * The optional methods of report recovery, part of `Storage` (all or none): without them,
 * `GET {base}/callbacks` and `POST {base}/callbacks/replay` are not served.
 */
export interface CallbackRecoveryStorage {
  /**
   * One page of the principal's reports in the states `query` asks for (pending and failed
   * when it names none), newest accepted message first (`createdAt`, then insertion order),
   * strictly after `query.after`, at most `query.limit`; `next` is `null` when none follows.
   * Served by an index on the report's state: a page costs about its own size.
   */
  listCallbacks(query: CallbackListQuery): Promise<MessageListPage>;

  /**
   * Makes each of the principal's `failed` reports that `selection` names pending again and
   * due at `now`, its attempts kept and its retry schedule started anew
   * (`CallbackState.restartedAfter`): the dispatcher then sends it as a new attempt. Reports
   * that are pending or delivered, or on another principal's messages, are left as they are.
   * Returns how many were made pending.
   */
  replayCallbacks(selection: ReplaySelection, now: number): Promise<number>;
}

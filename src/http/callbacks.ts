/**
 * Report recovery (docs/callbacks.md): `GET {base}/callbacks` lists the caller's pending or
 * failed delivery reports with their attempts, paged like the message list (the same cursor
 * and query checks, list-query.ts); `POST {base}/callbacks/replay` makes failed ones pending
 * again, by acceptance time or by message ref, and the dispatcher sends each as a new
 * attempt, signed at that attempt's time.
 *
 * @module
 */
import type { RequestHandler } from 'express';
import { SmsError } from '../errors.js';
import { OPEN_CALLBACK_STATES, type OpenCallbackState } from '../storage/callback-list.js';
import type { CallbackListQuery, MessageRecord, ReplaySelection, Storage } from '../storage/contract.js';
import { principalOf } from './authenticate.js';
import { encodeCursor, invalid, readPageQuery, readTimeRange } from './list-query.js';
import { sendJsonText } from './respond.js';
import { callbackView } from './status.js';

/** A storage with report recovery (the routes are mounted only then). */
export type RecoveryStorage = Storage & Required<Pick<Storage, 'listCallbacks' | 'replayCallbacks'>>;

/** The query parameters of the list. */
const PARAMETERS = ['state', 'since', 'until', 'limit', 'cursor'] as const;

/** Most message refs one replay names. */
export const MAX_REPLAY_IDS = 1000;

/** The fields a replay body may hold. */
const REPLAY_FIELDS = ['since', 'until', 'ids'];

/** One listed report: the message it is on and its delivery's state and attempts. */
export function callbackItem(message: MessageRecord): Record<string, unknown> {
  return {
    kind: 'report',
    message_ref: message.ref,
    status: message.state,
    created_at: new Date(message.createdAt).toISOString(),
    updated_at: new Date(message.updatedAt).toISOString(),
    callback: callbackView(message),
  };
}

/** The handler of `GET {base}/callbacks` over `storage`. */
export function listCallbacks(storage: RecoveryStorage): RequestHandler {
  return async (req, res) => {
    const { given, bounds } = readPageQuery(req, PARAMETERS);
    const query: CallbackListQuery = { principalId: principalOf(res).id, ...bounds };
    if (given.state !== undefined) {
      const states = given.state.split(',').map((state) => state.trim());
      if (states.some((state) => !(OPEN_CALLBACK_STATES as readonly string[]).includes(state))) {
        throw invalid(`state: must be one or more of ${OPEN_CALLBACK_STATES.join(', ')}, separated by commas`);
      }
      query.states = [...new Set(states as OpenCallbackState[])];
    }
    const page = await storage.listCallbacks(query);
    sendJsonText(res, 200, JSON.stringify({ callbacks: page.messages.map(callbackItem), next: page.next === null ? null : encodeCursor(page.next) }));
  };
}

/** A 422 naming what is wrong with a replay's body. */
const invalidReplay = (details: string) => new SmsError('INVALID_REPLAY', details);

/** The selection a replay body names for `principalId`; a coded 422 for any other body. */
export function readReplay(body: unknown, principalId: string): ReplaySelection {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidReplay('body: must be an object with since/until or ids');
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).find((name) => !REPLAY_FIELDS.includes(name));
  if (unknown !== undefined) throw invalidReplay(`${unknown}: is not a field of a replay (${REPLAY_FIELDS.join(', ')})`);
  if (fields.ids !== undefined) {
    if (fields.since !== undefined || fields.until !== undefined) throw invalidReplay('ids: give either ids or since/until, not both');
    const ids = fields.ids;
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_REPLAY_IDS || ids.some((id) => typeof id !== 'string' || id === '' || id.includes('\u0000'))) {
      throw invalidReplay(`ids: must be a list of 1 to ${MAX_REPLAY_IDS} message refs`);
    }
    return { principalId, refs: ids as string[] };
  }
  if (fields.since === undefined && fields.until === undefined) throw invalidReplay('since: give since and/or until, or ids');
  let range: { since?: number; until?: number };
  try {
    range = readTimeRange(fields);
  } catch (error) {
    throw invalidReplay((error as SmsError).details);
  }
  return { principalId, ...range };
}

/** What the replay handler needs. */
export interface ReplayDeps {
  storage: RecoveryStorage;
  now: () => number;
  /** Told after a replay of `principalId`'s reports: the dispatcher resumes their paused URLs and polls at once. */
  onReplay: (principalId: string) => void;
}

/** The handler of `POST {base}/callbacks/replay`: 200 with how many reports were queued again. */
export function replayCallbacks(deps: ReplayDeps): RequestHandler {
  return async (req, res) => {
    const principalId = principalOf(res).id;
    const selection = readReplay(req.body, principalId);
    const replayed = await deps.storage.replayCallbacks(selection, deps.now());
    sendJsonText(res, 200, JSON.stringify({ queued: replayed }));
    deps.onReplay(principalId);
  };
}

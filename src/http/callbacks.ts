/**
 * Webhook recovery (docs/callbacks.md): `GET {base}/callbacks` lists the caller's pending or
 * failed delivery reports (`kind=report`, the default) or inbound (MO) webhooks
 * (`kind=inbound`) with their attempts, each kind paged by its own cursor like the message
 * list (the same query checks, list-query.ts); `POST {base}/callbacks/replay` makes failed
 * ones pending again, by time or by ref, and the dispatcher sends each as a new attempt,
 * signed at that attempt's time.
 *
 * @module
 */
import type { RequestHandler } from 'express';
import { SmsError } from '../errors.js';
import { OPEN_CALLBACK_STATES, type OpenCallbackState } from '../storage/callback-list.js';
import type { CallbackListQuery, InboundRecord, MessageRecord, ReplaySelection, Storage } from '../storage/contract.js';
import type { InboundRecoveryStorage } from '../storage/inbound-record.js';
import { principalOf } from './authenticate.js';
import { encodeCursor, invalid, readPageQuery, readTimeRange } from './list-query.js';
import { sendJsonText } from './respond.js';
import { callbackView } from './status.js';

/** A storage with report recovery (the routes are mounted only then), and maybe inbound webhook recovery. */
export type RecoveryStorage = Storage & Required<Pick<Storage, 'listCallbacks' | 'replayCallbacks'>>;

/** The kinds of webhook the endpoints recover: a delivery report, or an inbound message's webhook. */
export type WebhookKind = 'report' | 'inbound';

/** Every {@link WebhookKind}, the default first. */
const KINDS: readonly WebhookKind[] = ['report', 'inbound'];

/** The query parameters of the list. */
const PARAMETERS = ['kind', 'state', 'since', 'until', 'limit', 'cursor'] as const;

/** Most refs one replay names. */
export const MAX_REPLAY_IDS = 1000;

/** The fields a replay body may hold. */
const REPLAY_FIELDS = ['kind', 'since', 'until', 'ids'];

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

/** One listed inbound webhook: the inbound message it forwards (its ref as the webhook's `data.message_ref`) and its state and attempts. */
export function inboundCallbackItem(inbound: InboundRecord): Record<string, unknown> {
  return {
    kind: 'inbound',
    message_ref: inbound.ref,
    from: inbound.from,
    to: inbound.to,
    received_at: new Date(inbound.receivedAt).toISOString(),
    callback: callbackView(inbound),
  };
}

/** The inbound webhook recovery of `storage`, or `null` when it keeps none. */
function inboundRecovery(storage: Storage): InboundRecoveryStorage | null {
  return storage.listInboundWebhooks !== undefined && storage.replayInboundWebhooks !== undefined ? (storage as InboundRecoveryStorage) : null;
}

/** The kind `text` names; `fail(details)` for any other, or for `inbound` on a storage without it. */
function readKind(text: unknown, storage: Storage, fail: (details: string) => SmsError): WebhookKind {
  if (typeof text !== 'string' || !(KINDS as readonly string[]).includes(text)) throw fail(`kind: must be one of ${KINDS.join(', ')}`);
  if (text === 'inbound' && inboundRecovery(storage) === null) throw fail('kind: this storage keeps no inbound webhooks to recover');
  return text as WebhookKind;
}

/** The handler of `GET {base}/callbacks` over `storage`. */
export function listCallbacks(storage: RecoveryStorage): RequestHandler {
  return async (req, res) => {
    const { given, bounds } = readPageQuery(req, PARAMETERS);
    const kind = given.kind === undefined ? 'report' : readKind(given.kind, storage, invalid);
    const query: CallbackListQuery = { principalId: principalOf(res).id, ...bounds };
    if (given.state !== undefined) {
      const states = given.state.split(',').map((state) => state.trim());
      if (states.some((state) => !(OPEN_CALLBACK_STATES as readonly string[]).includes(state))) {
        throw invalid(`state: must be one or more of ${OPEN_CALLBACK_STATES.join(', ')}, separated by commas`);
      }
      query.states = [...new Set(states as OpenCallbackState[])];
    }
    const page =
      kind === 'inbound'
        ? await inboundRecovery(storage)!.listInboundWebhooks(query).then(({ inbound, next }) => ({ items: inbound.map(inboundCallbackItem), next }))
        : await storage.listCallbacks(query).then(({ messages, next }) => ({ items: messages.map(callbackItem), next }));
    sendJsonText(res, 200, JSON.stringify({ callbacks: page.items, next: page.next === null ? null : encodeCursor(page.next) }));
  };
}

/** A 422 naming what is wrong with a replay's body. */
const invalidReplay = (details: string) => new SmsError('INVALID_REPLAY', details);

/** What a replay body names: the selection, and the kinds of webhook it is made on. */
export interface ReplayRequest {
  /** The caller's webhooks it names, by ref or by time. */
  selection: ReplaySelection;
  /** `kind` when given; else both for `ids` (a ref names one webhook of either kind) and `report` for a time range. */
  kinds: readonly WebhookKind[];
}

/** The replay a body names for `principalId` on `storage`; a coded 422 for any other body. */
export function readReplay(body: unknown, principalId: string, storage: Storage): ReplayRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidReplay('body: must be an object with since/until or ids');
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).find((name) => !REPLAY_FIELDS.includes(name));
  if (unknown !== undefined) throw invalidReplay(`${unknown}: is not a field of a replay (${REPLAY_FIELDS.join(', ')})`);
  const kind = fields.kind === undefined ? null : readKind(fields.kind, storage, invalidReplay);
  if (fields.ids !== undefined) {
    if (fields.since !== undefined || fields.until !== undefined) throw invalidReplay('ids: give either ids or since/until, not both');
    const ids = fields.ids;
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_REPLAY_IDS || ids.some((id) => typeof id !== 'string' || id === '' || id.includes('\u0000'))) {
      throw invalidReplay(`ids: must be a list of 1 to ${MAX_REPLAY_IDS} message refs`);
    }
    const kinds: WebhookKind[] = kind !== null ? [kind] : inboundRecovery(storage) === null ? ['report'] : ['report', 'inbound'];
    return { selection: { principalId, refs: ids as string[] }, kinds };
  }
  if (fields.since === undefined && fields.until === undefined) throw invalidReplay('since: give since and/or until, or ids');
  let range: { since?: number; until?: number };
  try {
    range = readTimeRange(fields);
  } catch (error) {
    throw invalidReplay((error as SmsError).details);
  }
  return { selection: { principalId, ...range }, kinds: [kind ?? 'report'] };
}

/** What the replay handler needs. */
export interface ReplayDeps {
  storage: RecoveryStorage;
  now: () => number;
  /** Told after a replay of `principalId`'s webhooks: the dispatcher resumes their paused URLs and polls at once. */
  onReplay: (principalId: string) => void;
}

/** The handler of `POST {base}/callbacks/replay`: 200 with how many webhooks were queued again. */
export function replayCallbacks(deps: ReplayDeps): RequestHandler {
  return async (req, res) => {
    const { storage } = deps;
    const principalId = principalOf(res).id;
    const { selection, kinds } = readReplay(req.body, principalId, storage);
    let queued = 0;
    if (kinds.includes('report')) queued += await storage.replayCallbacks(selection, deps.now());
    if (kinds.includes('inbound')) queued += await inboundRecovery(storage)!.replayInboundWebhooks(selection, deps.now());
    sendJsonText(res, 200, JSON.stringify({ queued }));
    deps.onReplay(principalId);
  };
}

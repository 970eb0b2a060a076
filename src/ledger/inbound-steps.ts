/**
 * Inbound (MO) messages over a record store's {@link InboundStore}: the ledger's
 * `InboundStorage` steps, holding the rules of the inbound webhook once for every store. A
 * message is stored with its webhook pending and due at its arrival; an attempt counts and
 * either schedules the next one or finishes the webhook; a replay makes a failed webhook
 * pending again with its retry schedule started anew. The store keeps the rows: it claims due
 * webhooks under a lease, and each change of a webhook is a compare-and-set write of the
 * state read, decided again when another writer got there first.
 *
 * @module
 */
import { eraseInbound, type ErasableInbound } from '../lifecycle/erase-record.js';
import type { CallbackAttempt, CallbackState } from '../storage/callback-record.js';
import type { CallbackListQuery, ReplaySelection } from '../storage/callback-list.js';
import type { EraseStorage } from '../storage/erase-storage.js';
import type { InboundRecord, InboundStorage, InboundWebhookPage, NewInbound } from '../storage/inbound-record.js';
import type { InboundStore, InboundWrite } from '../storage/inbound-store.js';
import { MAX_ATTEMPTS, WriteContentionError } from './compare-and-set.js';

/** Failed webhooks a range replay reads and writes at once: one page of the failed list. */
const REPLAY_PAGE = 500;

/** The webhook of a new message: pending and due at its arrival when it has a URL, else none. */
function newWebhook(message: NewInbound): CallbackState | null {
  if (message.callbackUrl === null || message.uid === null) return null;
  return { state: 'pending', attempts: 0, lastStatusCode: null, lastError: null, nextAttemptAt: message.receivedAt };
}

/** The webhook after `attempt`: a retry is due at its `nextAttemptAt`, `delivered` or `failed` finish it. */
function attempted(callback: CallbackState, attempt: CallbackAttempt): CallbackState {
  const retry = attempt.result === 'retry';
  return {
    ...callback,
    state: attempt.result === 'retry' ? 'pending' : attempt.result,
    attempts: callback.attempts + 1,
    lastStatusCode: attempt.statusCode,
    lastError: attempt.error,
    nextAttemptAt: retry ? (attempt.nextAttemptAt ?? attempt.now) : null,
  };
}

/** The write that replays `record`'s webhook at `now` when it is the principal's and failed, else `null`. */
function replayWrite(record: InboundRecord, principalId: string, now: number): InboundWrite | null {
  const callback = record.callback;
  if (record.principalId !== principalId || record.uid === null || callback?.state !== 'failed') return null;
  return { uid: record.uid, expected: callback, callback: { ...callback, state: 'pending', nextAttemptAt: now, restartedAfter: callback.attempts } };
}

/** The inbound steps of a ledger over `store`, the optional ones only when the store has their primitives. */
export function inboundSteps(store: InboundStore): InboundStorage & Pick<EraseStorage, 'eraseInbound'> {
  /** Applies `writes`; how many held (a replay that lost found the webhook no longer failed). */
  const written = async (writes: InboundWrite[]): Promise<number> => (await store.write(writes)).filter(Boolean).length;
  const steps: InboundStorage & Pick<EraseStorage, 'eraseInbound'> = {
    insertInbound(message, options = {}) {
      const callback = newWebhook(message);
      // Only a webhook is leased: a message without one has nothing to send.
      const { lease, ...unleased } = options;
      return store.insert({ ...message, callback }, callback === null || lease === undefined ? unleased : options);
    },
    async claimInbound(options) {
      const claimed = await store.claim(options);
      return claimed.map((inbound) => ({ uid: inbound.uid!, attempts: inbound.callback!.attempts, inbound }));
    },
    deferInbound: (uids, until) => store.deferInbound(uids, until),
    async recordInboundAttempt(uid, attempt) {
      for (let round = 0; round < MAX_ATTEMPTS; round++) {
        const [record] = await store.find('uid', [uid]);
        const callback = record?.callback;
        // Finished (or gone): a late attempt changes nothing.
        if (callback?.state !== 'pending') return;
        if ((await written([{ uid, expected: callback, callback: attempted(callback, attempt) }])) > 0) return;
      }
      throw new WriteContentionError(uid);
    },
    listInbound: (options) => store.listInbound(options),
    purgeInbound: (before, limit) => store.purgeInbound(before, limit),
    setOptOut: (key, optedOut, at) => store.setOptOut(key, optedOut, at),
    findOptOuts: (keys) => store.findOptOuts(keys),
    listOptOuts: (options) => store.listOptOuts(options),
  };
  const { storeInboundPart, listWebhooks, erase } = store;
  if (storeInboundPart !== undefined) steps.storeInboundPart = (part) => storeInboundPart.call(store, part);
  if (listWebhooks !== undefined) {
    steps.listInboundWebhooks = async (query: CallbackListQuery): Promise<InboundWebhookPage> => {
      const limit = Math.floor(query.limit);
      if (limit <= 0) return { inbound: [], next: null };
      // One more than the page: whether a next page exists without a second read.
      const rows = await listWebhooks.call(store, { ...query, limit: limit + 1 });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        inbound: page.map((row) => row.record),
        next: rows.length <= limit || last === undefined ? null : { createdAt: last.record.receivedAt, seq: last.seq },
      };
    };
    steps.replayInboundWebhooks = async (selection: ReplaySelection, now: number): Promise<number> => {
      const { principalId } = selection;
      const replay = (records: InboundRecord[]): InboundWrite[] => records.flatMap((record) => replayWrite(record, principalId, now) ?? []);
      if ('refs' in selection) return written(replay(await store.find('ref', [...new Set(selection.refs)])));
      const query: CallbackListQuery = { ...selection, states: ['failed'], limit: REPLAY_PAGE };
      let replayed = 0;
      for (;;) {
        const rows = await listWebhooks.call(store, query);
        replayed += await written(replay(rows.map((row) => row.record)));
        const last = rows.at(-1);
        if (rows.length < REPLAY_PAGE || last === undefined) return replayed;
        query.after = { createdAt: last.record.receivedAt, seq: last.seq };
      }
    };
  }
  if (erase !== undefined) {
    steps.eraseInbound = (from, limit) => {
      const erased: ErasableInbound = { from, text: '' };
      eraseInbound(erased);
      return erase.call(store, from, limit, erased);
    };
  }
  return steps;
}

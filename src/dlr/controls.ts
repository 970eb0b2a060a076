/**
 * `router.callbacks`: report recovery for the host and the operator console
 * (docs/callbacks.md). A replay makes a principal's failed reports (or inbound webhooks)
 * pending again and resumes the paused URLs its webhooks failed at; the paused URLs can be listed and resumed one by one.
 *
 * @module
 */
import type { ReplaySelection, Storage } from '../storage/contract.js';
import type { CallbackDispatcher } from './dispatcher.js';

/** What `router.callbacks` offers. */
export interface CallbackControls {
  /**
   * Makes the failed reports `selection` names (the principal's, by message ref or by
   * acceptance time) pending again, as `POST {base}/callbacks/replay` does, and resumes the
   * paused URLs the principal's reports failed at; resolves with how many were queued.
   * Rejects when the storage has no report recovery (`replayCallbacks`).
   */
  replay(selection: ReplaySelection): Promise<number>;
  /**
   * Makes the failed inbound (MO) webhooks `selection` names (the principal's, by inbound
   * ref or by arrival time) pending again, as a replay with `kind: "inbound"` does, and
   * resumes the paused URLs alike; resolves with how many were queued. Rejects when the
   * storage has no inbound webhook recovery (`replayInboundWebhooks`).
   */
  replayInbound(selection: ReplaySelection): Promise<number>;
  /** Resumes a paused callback URL (`callback.endpoint_resumed`); whether it was paused. */
  resume(url: string): boolean;
  /** The callback URLs paused on this instance, with when each began failing (epoch ms). */
  paused(): { url: string; failingSince: number }[];
}

/** What the controls need: the storage, the dispatcher, the clock, and the wait for the storage's `ready()`. */
export interface CallbackControlDeps {
  storage: Storage;
  dispatcher: CallbackDispatcher;
  now: () => number;
  storageReady: () => Promise<void>;
}

/** The controls over `deps` (see the module comment). */
export function callbackControls(deps: CallbackControlDeps): CallbackControls {
  const { storage, dispatcher, now } = deps;
  return {
    async replay(selection) {
      if (storage.replayCallbacks === undefined) throw new Error('callbacks.replay: the storage has no report recovery (replayCallbacks)');
      await deps.storageReady();
      const queued = await storage.replayCallbacks(selection, now());
      replayed(dispatcher, selection.principalId, now());
      return queued;
    },
    async replayInbound(selection) {
      if (storage.replayInboundWebhooks === undefined) throw new Error('callbacks.replayInbound: the storage has no inbound webhook recovery (replayInboundWebhooks)');
      await deps.storageReady();
      const queued = await storage.replayInboundWebhooks(selection, now());
      replayed(dispatcher, selection.principalId, now());
      return queued;
    },
    resume: (url) => dispatcher.endpoints.resume(url, 'api', now()),
    paused: () => dispatcher.endpoints.paused(),
  };
}

/** After a replay of `principalId`'s webhooks: the URLs they failed at are resumed, and the dispatcher polls at once, for both kinds. */
export function replayed(dispatcher: CallbackDispatcher, principalId: string, now: number): void {
  dispatcher.endpoints.resumeFor(principalId, now);
  dispatcher.wakeInbound();
}

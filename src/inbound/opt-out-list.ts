/**
 * The opt-out list as the router exposes it (`router.optOuts`), for hosts that import or
 * show one: a change made here is announced as a keyword's is, with `source: 'api'`.
 */
import type { Emit } from '../observe/events.js';
import type { OptOutEntry, OptOutKey, Storage } from '../storage/contract.js';
import { plainAddress } from './text.js';

/** The opt-out list of the router's storage: `router.optOuts`. */
export interface OptOutList {
  /**
   * Opts `number` out of `shortCode`: premium messages from that short code to it end
   * `rejected` (`opted_out`). Resolves with whether the list changed (then `subscriber.opted_out`
   * is emitted, `source: 'api'`).
   */
  add(shortCode: string, number: string): Promise<boolean>;
  /** Opts `number` back in to `shortCode`; whether the list changed (then `subscriber.opted_in`). */
  remove(shortCode: string, number: string): Promise<boolean>;
  /** Whether `number` is opted out of `shortCode`. */
  has(shortCode: string, number: string): Promise<boolean>;
  /**
   * A page of the list, by short code then number: all of it or one short code's, `limit`
   * entries (default 100), from after `after` (the last entry of the previous page).
   */
  list(options?: { shortCode?: string; limit?: number; after?: OptOutKey }): Promise<OptOutEntry[]>;
}

/** The opt-out list of `storage`; its methods reject when the storage keeps none (no inbound methods). */
export function optOutList(storage: Storage, emit: Emit, now: () => number): OptOutList {
  const inbound = storage.insertInbound === undefined ? null : (storage as Required<Storage>);
  const needInbound = (): Required<Storage> => {
    if (inbound === null) throw new Error('sms-outbox: the storage keeps no opt-out list (it has no inbound methods)');
    return inbound;
  };
  const key = (shortCode: string, number: string): OptOutKey => {
    if (typeof shortCode !== 'string' || plainAddress(shortCode) === '') throw new TypeError('optOuts: shortCode must be a non-empty string');
    if (typeof number !== 'string' || plainAddress(number) === '') throw new TypeError('optOuts: number must be a non-empty string');
    return { shortCode: plainAddress(shortCode), number: plainAddress(number) };
  };
  const change = async (shortCode: string, number: string, optedOut: boolean): Promise<boolean> => {
    const k = key(shortCode, number);
    const at = now();
    const changed = await needInbound().setOptOut(k, optedOut, at);
    if (changed) emit(optedOut ? 'subscriber.opted_out' : 'subscriber.opted_in', { ...k, source: 'api', at });
    return changed;
  };
  return {
    add: (shortCode, number) => change(shortCode, number, true),
    remove: (shortCode, number) => change(shortCode, number, false),
    has: async (shortCode, number) => (await needInbound().findOptOuts([key(shortCode, number)]))[0] === true,
    list: async (options = {}) => needInbound().listOptOuts({ ...options, limit: options.limit ?? 100 }),
  };
}

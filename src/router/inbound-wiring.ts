/**
 * The premium MO flow, wired: the handler of the MO messages the carrier delivers, the
 * opt-out list as the router exposes it (`router.optOuts`), the opt-out check the worker asks
 * before a premium message's first part, the one the send endpoints ask for quick-send
 * profiles that honour opt-outs, and the confirmation replies.
 */
import { isPromiseLike } from '../util/settle.js';
import type { CallbackDispatcher } from '../dlr/dispatcher.js';
import { newMessageRef } from '../http/message-ref.js';
import type { OptOutGate } from '../http/opt-out-gate.js';
import { outcome } from '../lifecycle/states.js';
import type { Emit } from '../observe/events.js';
import type { MessageHandOff } from '../outbox/hand-off.js';
import { countSms } from '../sms/segments.js';
import type { MessageRecord, NewMessage, OptOutEntry, OptOutKey, Storage, Transition } from '../storage/contract.js';
import { InboundHandler, keywordMatcher, plainAddress, type InboundTarget, type Keyword } from '../worker/inbound-handler.js';
import type { InboundConfig } from '../inbound/options.js';

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

/** What the wiring needs from the router. */
export interface InboundWiringDeps {
  /** The resolved `inbound` option. */
  config: InboundConfig;
  /** The router's storage. */
  storage: Storage;
  /** Emits the router's events. */
  emit: Emit;
  /** The clock, epoch ms. */
  now: () => number;
  /** The webhook sender, which inbound webhooks share with reports. */
  dispatcher: CallbackDispatcher;
  /** This instance's worker, once made (it is made after the wiring, which it asks). */
  handOff: () => MessageHandOff;
  /** Where the transitions of messages ended at acceptance go. */
  onTransition: (transition: Transition) => void;
  /** The lease owner id of this instance. */
  owner: string;
}

/** The parts of the MO flow the router hands to its other parts. */
export interface InboundWiring {
  /** Takes the MO messages the carrier delivers. */
  handler: InboundHandler;
  /** `router.optOuts`. */
  optOuts: OptOutList;
  /** For the worker: whether a message's recipient opted out of its sender; absent without inbound storage. */
  optedOut: ((message: MessageRecord) => Promise<boolean>) | undefined;
  /** For the send endpoints; `null` without inbound storage. */
  gate: OptOutGate | null;
}

/** The principal a confirmation reply is stored under when the short code has no owner. */
const SYSTEM_PRINCIPAL = 'sms-outbox';

/** How long a request's messages are held while its opted-out ones are ended, when the worker had no room (ms). */
const HOLD_MS = 5_000;

/** Wires the MO flow (see the module comment). */
export function wireInbound(deps: InboundWiringDeps): InboundWiring {
  const { config, storage, emit, now, dispatcher } = deps;
  const inbound = storage.insertInbound === undefined ? null : (storage as Required<Storage>);
  const resolveOwner = config.resolveOwner;

  const target = async (to: string): Promise<InboundTarget | null> => {
    if (resolveOwner === null) return null;
    const found = resolveOwner(to);
    const owner = isPromiseLike(found) ? await found : found;
    if (owner === null || owner === undefined) return null;
    const url = owner.profile.inboundUrl ?? owner.principal.inboundUrl ?? null;
    return { principalId: owner.principal.id, profileCode: owner.profile.code, url, secret: owner.principal.callbackSecret ?? null };
  };

  /** Stores and hands to the worker one MT reply from `shortCode` to `number`. */
  const reply = async (text: string, shortCode: string, number: string, owner: InboundTarget | null): Promise<void> => {
    const at = now();
    const count = countSms(text);
    const ref = newMessageRef(at);
    const message: NewMessage = {
      ref, principalId: owner?.principalId ?? SYSTEM_PRINCIPAL, endpoint: 'quick', profileCode: owner?.profileCode ?? shortCode,
      sender: shortCode, recipient: number, text, messageType: 1, reqType: 1, externalId: ref,
      recipientField: 'recipient', referenceField: 'external_id', smsCount: count.smsCount, encoding: count.encoding,
      callbackUrl: null, callbackSecret: null, createdAt: at, priority: 'transactional', weight: 1,
    };
    const handOff = deps.handOff();
    const lease = handOff.lease(1, 'transactional');
    try {
      await storage.insertMessages([message], lease ?? undefined);
    } catch (error) {
      handOff.notStored(1, lease);
      throw error;
    }
    handOff.stored([message], lease);
  };

  const confirm = (keyword: Keyword, shortCode: string, number: string, owner: InboundTarget | null): void => {
    const text = config.confirmation[keyword];
    if (text === null) return;
    reply(text, shortCode, number, owner).catch((error: unknown) => emit('error', { error, source: 'worker' }));
  };

  const handler = new InboundHandler({
    storage, emit, now, target,
    keyword: keywordMatcher(config.stopKeywords, config.startKeywords),
    webhookLease: (at) => dispatcher.reportLease(at),
    handOver: (record, until) => dispatcher.handOverInbound(record, until),
    wake: () => dispatcher.wakeInbound(),
    confirm,
  });

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
  const optOuts: OptOutList = {
    add: (shortCode, number) => change(shortCode, number, true),
    remove: (shortCode, number) => change(shortCode, number, false),
    has: async (shortCode, number) => (await needInbound().findOptOuts([key(shortCode, number)]))[0] === true,
    list: async (options = {}) => needInbound().listOptOuts({ ...options, limit: options.limit ?? 100 }),
  };

  const OPTED_OUT = outcome('rejected', 'opted_out');
  const gate: OptOutGate | null =
    inbound === null
      ? null
      : {
          blocked: async (messages) => {
            const found = await inbound.findOptOuts(messages.map((m) => ({ shortCode: m.sender, number: m.recipient })));
            const refs = new Set<string>();
            for (const [i, optedOut] of found.entries()) if (optedOut) refs.add(messages[i]!.ref);
            return refs.size === 0 ? null : refs;
          },
          holdLease: (at) => ({ owner: `${deps.owner}:opt-out`, until: at + HOLD_MS }),
          end: async (refs) => {
            for (const ref of refs) {
              const transition = await storage.finish(ref, OPTED_OUT, now());
              if (transition !== null) deps.onTransition(transition);
            }
          },
        };

  return {
    handler,
    optOuts,
    optedOut:
      inbound === null
        ? undefined
        : async (message) => (await inbound.findOptOuts([{ shortCode: message.sender, number: message.recipient }]))[0] === true,
    gate,
  };
}

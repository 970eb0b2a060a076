/**
 * The confirmation replies: the MT message a subscriber who sent a stop or start keyword gets
 * back from the short code (`inbound.confirmation`). It is stored like a quick-send message
 * (under the short code's owner, else the system principal) and handed to this instance's
 * worker, and it is never blocked by the opt-out it confirms: the worker checks premium
 * messages only.
 */
import type { Emit } from '../observe/events.js';
import type { MessageHandOff } from '../outbox/hand-off.js';
import { newMessageRef } from '../outbox/message-ref.js';
import { countSms } from '../sms/segments.js';
import type { NewMessage, Storage } from '../storage/contract.js';
import type { Keyword } from './keywords.js';
import type { InboundTarget } from './owners.js';

/** What the replies need. */
export interface ConfirmationDeps {
  /** The reply to each keyword; `null`: none. */
  texts: { readonly [K in Keyword]: string | null };
  /** Where the replies are stored. */
  storage: Storage;
  /** This instance's submit worker. */
  handOff: MessageHandOff;
  /** Emits an `error` when a reply could not be stored. */
  emit: Emit;
  /** The clock, epoch ms. */
  now: () => number;
}

/** The principal a confirmation reply is stored under when the short code has no owner. */
const SYSTEM_PRINCIPAL = 'sms-outbox';

/**
 * Returns the inbound handler's `confirm`: sends the reply to `keyword`, if one is set, from
 * `shortCode` to `number`; a reply that could not be stored is an `error` event.
 */
export function confirmations(deps: ConfirmationDeps): (keyword: Keyword, shortCode: string, number: string, owner: InboundTarget | null) => void {
  const { storage, handOff, emit, now } = deps;

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
    const lease = handOff.lease(1, 'transactional');
    try {
      await storage.insertMessages([message], lease ?? undefined);
    } catch (error) {
      handOff.notStored(1, lease);
      throw error;
    }
    handOff.stored([message], lease);
  };

  return (keyword, shortCode, number, owner) => {
    const text = deps.texts[keyword];
    if (text === null) return;
    reply(text, shortCode, number, owner).catch((error: unknown) => emit('error', { error, source: 'worker' }));
  };
}

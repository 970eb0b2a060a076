/**
 * A message's parts as the carrier is given them (`OutgoingPart`): built here once for the
 * submit worker, which sends them, and for the send preview, which asks the delivery which
 * route the first would take.
 */
import type { OutgoingPart } from '../delivery/contract.js';
import type { MessageRecord, NewMessage } from '../storage/contract.js';

/** The 8-bit concatenation reference of a message: stable across retries, from its ref. */
export function concatRefOf(ref: string): number {
  let hash = 0;
  for (let i = 0; i < ref.length; i++) hash = (hash * 31 + ref.charCodeAt(i)) >>> 0;
  return hash & 0xff;
}

/**
 * Part `index` of `message`, whose texts by part are `texts` (`splitSms`) and whose
 * concatenation reference is `concatRef` ({@link concatRefOf}).
 */
export function outgoingPart(message: MessageRecord | NewMessage, index: number, texts: readonly string[], concatRef: number): OutgoingPart {
  return {
    ref: message.ref,
    principalId: message.principalId,
    profileCode: message.profileCode,
    sender: message.sender,
    recipient: message.recipient,
    country: message.country,
    text: message.text,
    partText: texts[index] ?? '',
    index,
    count: message.smsCount,
    concatRef,
    encoding: message.encoding,
    messageType: message.messageType,
    reqType: message.reqType,
  };
}

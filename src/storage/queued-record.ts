/**
 * The record of a message just stored: what every adapter would read back right after
 * `insertMessages`. The worker starts on messages it leased at insert from this, without
 * reading them back, and the memory storage keeps it as its own copy.
 */
import type { MessageRecord, NewMessage, PartRecord } from './contract.js';

/** `message` as stored: `queued`, no attempt yet, every part still to be submitted. */
export function queuedRecord(message: NewMessage): MessageRecord {
  return {
    ref: message.ref,
    principalId: message.principalId,
    endpoint: message.endpoint,
    profileCode: message.profileCode,
    sender: message.sender,
    recipient: message.recipient,
    text: message.text,
    messageType: message.messageType,
    reqType: message.reqType,
    externalId: message.externalId,
    recipientField: message.recipientField,
    referenceField: message.referenceField,
    smsCount: message.smsCount,
    encoding: message.encoding,
    callbackUrl: message.callbackUrl,
    callbackSecret: message.callbackSecret,
    createdAt: message.createdAt,
    state: 'queued',
    statusReason: null,
    statusDescription: null,
    attempts: 0,
    lastError: null,
    updatedAt: message.createdAt,
    parts: queuedParts(message.smsCount),
    callback: null,
  };
}

/** The `count` parts of a message not yet submitted, in index order. */
export function queuedParts(count: number): PartRecord[] {
  // Sized once: an array grown by push reserves room for 17 elements, and the memory
  // storage keeps one per message (most messages have one part).
  const parts = new Array<PartRecord>(count);
  for (let index = 0; index < count; index++) parts[index] = { index, carrierId: null, outcome: null };
  return parts;
}

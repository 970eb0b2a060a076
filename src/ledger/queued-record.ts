/**
 * The record of a message just accepted, as the library decides it: `queued`, or `scheduled`
 * when it is due later than its acceptance; no attempt yet, every part still to be
 * submitted. The ledger stores it, and the worker starts on the messages it leased at insert
 * from it, without reading them back.
 */
import type { MessageRecord, NewMessage, PartRecord } from '../storage/contract.js';

// The class and the interface merge: a QueuedRecord has every MessageRecord field, set by
// the constructor. A class rather than a function returning a literal: every record built
// here has one shape, which keeps the objects compact and their property reads fast.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface QueuedRecord extends MessageRecord {}

/**
 * `message` as stored: `queued` (`scheduled` when its `sendAt` is later than its acceptance),
 * no attempt yet, every part still to be submitted.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class QueuedRecord {
  constructor(message: NewMessage) {
    this.ref = message.ref;
    this.principalId = message.principalId;
    this.endpoint = message.endpoint;
    this.profileCode = message.profileCode;
    this.sender = message.sender;
    this.recipient = message.recipient;
    this.text = message.text;
    this.messageType = message.messageType;
    this.reqType = message.reqType;
    this.externalId = message.externalId;
    this.recipientField = message.recipientField;
    this.referenceField = message.referenceField;
    this.smsCount = message.smsCount;
    this.encoding = message.encoding;
    this.callbackUrl = message.callbackUrl;
    this.callbackSecret = message.callbackSecret;
    this.createdAt = message.createdAt;
    this.priority = message.priority;
    this.sendAt = message.sendAt ?? null;
    this.validUntil = message.validUntil ?? null;
    // Only when there is one: a record without a trace has no such key, as the message had none.
    if (message.traceparent !== undefined) this.traceparent = message.traceparent;
    // The same for what the recipient stage read of the number (docs/numbers.md).
    if (message.recipientAsSent !== undefined) this.recipientAsSent = message.recipientAsSent;
    if (message.country !== undefined) this.country = message.country;
    if (message.numberType !== undefined) this.numberType = message.numberType;
    if (message.holdReason !== undefined) this.holdReason = message.holdReason;
    if (message.reportFormat !== undefined) this.reportFormat = message.reportFormat;
    if (message.reportPer !== undefined) this.reportPer = message.reportPer;
    if (message.retainText !== undefined) this.retainText = message.retainText;
    this.state = isScheduled(message) ? 'scheduled' : 'queued';
    this.statusReason = null;
    this.statusDescription = null;
    this.attempts = 0;
    this.lastError = null;
    this.updatedAt = message.createdAt;
    this.parts = queuedParts(message.smsCount);
    this.callback = null;
  }
}

/** Whether `message` is stored `scheduled`: due later than it was accepted. */
export function isScheduled(message: NewMessage): boolean {
  const sendAt = message.sendAt;
  return sendAt !== null && sendAt !== undefined && sendAt > message.createdAt;
}

/** The `count` parts of a message not yet submitted, in index order. */
function queuedParts(count: number): PartRecord[] {
  // Sized once: an array grown by push reserves room for 17 elements, and the memory
  // storage keeps one per message (most messages have one part).
  const parts = new Array<PartRecord>(count);
  for (let index = 0; index < count; index++) parts[index] = { index, carrierId: null, outcome: null };
  return parts;
}

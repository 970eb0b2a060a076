/**
 * The copy of a message record the ledger hands to its caller. A record store may hand out
 * the objects it keeps, and the ledger keeps rows of its own: a caller that changed a record
 * it was given would change stored state, so every record leaves as a copy.
 *
 * @module
 */
import type { MessageRecord, Outcome, PartRecord } from '../storage/contract.js';

function copyOutcome(outcome: Outcome | null): Outcome | null {
  return outcome === null ? null : { state: outcome.state, reason: outcome.reason, description: outcome.description };
}

function copyParts(parts: readonly PartRecord[]): PartRecord[] {
  const copies = new Array<PartRecord>(parts.length);
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const copy: PartRecord = { index: part.index, carrierId: part.carrierId, outcome: copyOutcome(part.outcome) };
    // Only when kept: a part stored before parts kept their times has no such keys.
    if (part.submittedAt !== undefined) {
      copy.submittedAt = part.submittedAt;
      copy.endedAt = part.endedAt ?? null;
    }
    copies[i] = copy;
  }
  return copies;
}

/**
 * A copy of `record` the caller may change. Field by field rather than by spread: every
 * copy then shares one object shape, and the copy is several times cheaper (it runs for
 * every claim and every transition).
 */
export function copyRecord(record: MessageRecord): MessageRecord {
  const copy = recordFields(record);
  copy.parts = copyParts(record.parts);
  copy.callback = record.callback === null ? null : { ...record.callback };
  return copy;
}

/**
 * A new record with the fields of `record`, its parts and report state shared (never
 * changed in place): the start of a record's next version, which the ledger then changes.
 */
export function recordFields(record: MessageRecord): MessageRecord {
  const fields: MessageRecord = {
    ref: record.ref,
    principalId: record.principalId,
    endpoint: record.endpoint,
    profileCode: record.profileCode,
    sender: record.sender,
    recipient: record.recipient,
    text: record.text,
    messageType: record.messageType,
    reqType: record.reqType,
    externalId: record.externalId,
    recipientField: record.recipientField,
    referenceField: record.referenceField,
    smsCount: record.smsCount,
    encoding: record.encoding,
    callbackUrl: record.callbackUrl,
    callbackSecret: record.callbackSecret,
    createdAt: record.createdAt,
    priority: record.priority,
    state: record.state,
    statusReason: record.statusReason,
    statusDescription: record.statusDescription,
    attempts: record.attempts,
    lastError: record.lastError,
    updatedAt: record.updatedAt,
    parts: record.parts,
    callback: record.callback,
    sendAt: record.sendAt ?? null,
    validUntil: record.validUntil ?? null,
  };
  // Only when there is one: a record without them has no such keys, as it was stored.
  if (record.traceparent !== undefined) fields.traceparent = record.traceparent;
  if (record.recipientAsSent !== undefined) fields.recipientAsSent = record.recipientAsSent;
  if (record.country !== undefined) fields.country = record.country;
  if (record.numberType !== undefined) fields.numberType = record.numberType;
  if (record.holdReason !== undefined) fields.holdReason = record.holdReason;
  if (record.reportFormat !== undefined) fields.reportFormat = record.reportFormat;
  if (record.reportPer !== undefined) fields.reportPer = record.reportPer;
  if (record.retainText !== undefined) fields.retainText = record.retainText;
  if (record.textSha256 !== undefined) fields.textSha256 = record.textSha256;
  if (record.recipientSha256 !== undefined) fields.recipientSha256 = record.recipientSha256;
  return fields;
}

/** Message rows for the record-store tests: a plain queued row, with any field overridden. */
import type { MessageRecord } from '../../src/storage/message-record.js';
import type { MessageRow } from '../../src/storage/record-store.js';

/** A queued bulk message of principal `p1` accepted at 1000, due at once. */
export function row(ref: string, overrides: Partial<MessageRow> = {}, record: Partial<MessageRecord> = {}): MessageRow {
  return {
    record: {
      ref,
      principalId: 'p1',
      endpoint: 'quick',
      profileCode: '1',
      sender: 'ACME',
      recipient: '254712345678',
      text: 'hello',
      messageType: 1,
      reqType: 1,
      externalId: `ext-${ref}`,
      recipientField: 'recipient',
      referenceField: 'external_id',
      smsCount: 1,
      encoding: 'GSM-7',
      callbackUrl: null,
      callbackSecret: null,
      createdAt: 1000,
      priority: 'bulk',
      state: 'queued',
      statusReason: null,
      statusDescription: null,
      attempts: 0,
      lastError: null,
      updatedAt: 1000,
      parts: [{ index: 0, carrierId: null, outcome: null }],
      callback: null,
      ...record,
    },
    book: { weight: 1, charge: null, replacedCarrierIds: [], reportUid: null },
    version: 0,
    seq: 0,
    queue: 1,
    orderKey: 0,
    dueAt: 1000,
    leaseOwner: null,
    leaseUntil: null,
    reportDueAt: null,
    timer: null,
    timerAt: null,
    carrierIds: [],
    ...overrides,
  };
}

import { describe, expect, it } from 'vitest';
import { buildDlrPayload, buildReport } from '../../src/dlr/payload.js';
import { webhookBody } from '../../src/dlr/webhook.js';
import type { MessageRecord } from '../../src/storage/contract.js';
import { newMessage } from './helpers.js';

function terminal(overrides: Partial<MessageRecord> = {}): MessageRecord {
  return {
    ...newMessage('https://client.example/dlr', 1594868000000),
    ref: 'ref-1',
    externalId: 'abc-1',
    recipient: '254712345678',
    smsCount: 2,
    state: 'delivered',
    statusReason: 'delivered_to_terminal',
    statusDescription: 'Message delivered to terminal',
    attempts: 1,
    lastError: null,
    updatedAt: 1594868435999,
    parts: [],
    callback: null,
    ...overrides,
  };
}

describe('buildDlrPayload', () => {
  it('has the published webhook shape', () => {
    expect(JSON.parse(JSON.stringify(buildDlrPayload('uid-1', terminal())))).toEqual({
      uid: 'uid-1',
      actor_type: 'system',
      event_type: 'sms_delivery_status',
      created_at: '1594868435',
      data: {
        external_id: 'abc-1',
        message_ref: 'ref-1',
        recipient: '254712345678',
        status: 'delivered',
        status_reason: 'delivered_to_terminal',
        status_description: 'Message delivered to terminal',
        sms_count: 2,
      },
    });
  });

  it('adds message_id for a caller that used message_id, keeping external_id', () => {
    const payload = buildDlrPayload('uid-2', terminal({ referenceField: 'message_id', externalId: 'm-77' }));
    expect(payload.data.message_id).toBe('m-77');
    expect(payload.data.external_id).toBe('m-77');
  });

  it('always names the number recipient, whatever field the request used', () => {
    const payload = buildDlrPayload('uid-3', terminal({ recipientField: 'mobile_number' }));
    expect(payload.data.recipient).toBe('254712345678');
    expect(payload.data).not.toHaveProperty('mobile_number');
    expect(payload.data).not.toHaveProperty('message_id');
  });

  it('reports a failure with its reason', () => {
    const payload = buildDlrPayload(
      'uid-4',
      terminal({ state: 'undelivered', statusReason: 'absent_subscriber', statusDescription: 'Subscriber absent or unreachable' }),
    );
    expect(payload.data).toMatchObject({ status: 'undelivered', status_reason: 'absent_subscriber' });
  });
});

describe('buildReport', () => {
  it('is the envelope for the envelope format', () => {
    expect(buildReport('uid-1', terminal(), 'envelope')).toEqual(buildDlrPayload('uid-1', terminal()));
  });

  it('lifts data to the top level for the flat format, with reason, message_id included', () => {
    const flat = buildReport(
      'uid-5',
      terminal({ state: 'undelivered', statusReason: 'absent_subscriber', statusDescription: 'Subscriber absent or unreachable', referenceField: 'message_id', externalId: 'm-9' }),
      'flat',
    );
    expect(JSON.parse(JSON.stringify(flat))).toEqual({
      uid: 'uid-5',
      actor_type: 'system',
      event_type: 'sms_delivery_status',
      created_at: '1594868435',
      external_id: 'm-9',
      message_id: 'm-9',
      message_ref: 'ref-1',
      recipient: '254712345678',
      status: 'undelivered',
      status_reason: 'absent_subscriber',
      status_description: 'Subscriber absent or unreachable',
      reason: 'Subscriber absent or unreachable',
      sms_count: 2,
    });
  });
});

describe('webhookBody', () => {
  it("sends the format kept with the message, whatever the principal's is now; its principal's when none was kept", () => {
    const due = (overrides: Partial<MessageRecord>) => ({ uid: 'uid-1', attempts: 0, message: terminal(overrides) });
    const envelopeNow = () => 'envelope' as const;
    const flatNow = () => 'flat' as const;
    // Accepted flat, reported by an instance that knows nothing of the principal.
    expect(JSON.parse(webhookBody(due({ reportFormat: 'flat' }), envelopeNow))).toMatchObject({ external_id: 'abc-1', status: 'delivered' });
    expect(JSON.parse(webhookBody(due({ reportFormat: 'envelope' }), flatNow))).toHaveProperty('data.external_id', 'abc-1');
    expect(JSON.parse(webhookBody(due({}), flatNow))).toMatchObject({ external_id: 'abc-1' });
    expect(JSON.parse(webhookBody(due({}), envelopeNow))).toHaveProperty('data');
  });
});

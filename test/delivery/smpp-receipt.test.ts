import { describe, expect, it } from 'vitest';
import {
  classifySubmitStatus,
  interpretReceipt,
  outcomeOfStat,
  parseReceiptText,
} from '../../src/delivery/smpp/receipt.js';

const STANDARD =
  'id:1A2B3C4D sub:001 dlvrd:001 submit date:2401011200 done date:2401011201 stat:DELIVRD err:000 text:Hello id:X';

describe('parseReceiptText', () => {
  it('reads every field of the standard receipt text', () => {
    expect(parseReceiptText(STANDARD)).toEqual({
      id: '1A2B3C4D',
      sub: '001',
      dlvrd: '001',
      submitDate: '2401011200',
      doneDate: '2401011201',
      stat: 'DELIVRD',
      err: '000',
      text: 'Hello id:X',
    });
  });

  it('tolerates lower case, another field order, extra spaces and missing fields', () => {
    const fields = parseReceiptText('stat: undeliv  ERR:027 ID:  440123  Done Date:2401011201');
    expect(fields).toMatchObject({ id: '440123', stat: 'UNDELIV', err: '027', doneDate: '2401011201', sub: null, text: null });
  });

  it('does not take an id from the echoed text', () => {
    expect(parseReceiptText('stat:DELIVRD text:id:999').id).toBeNull();
  });
});

describe('outcomeOfStat', () => {
  it.each([
    ['DELIVRD', null, 'delivered', 'delivered_to_terminal'],
    ['UNDELIV', '000', 'undelivered', 'delivery_impossible'],
    ['UNDELIV', '027', 'undelivered', 'absent_subscriber'],
    ['UNDELIV', '6', 'undelivered', 'absent_subscriber'],
    ['EXPIRED', null, 'expired', 'expired'],
    ['REJECTD', null, 'rejected', 'rejected'],
    ['DELETED', null, 'undelivered', 'delivery_impossible'],
    ['UNKNOWN', null, 'undelivered', 'unknown'],
    ['delivered', null, 'delivered', 'delivered_to_terminal'],
  ])('maps %s (err %s) to %s/%s', (stat, err, state, reason) => {
    expect(outcomeOfStat(stat, err)).toMatchObject({ state, reason });
  });

  it('treats ACCEPTD and ENROUTE as intermediate and an unknown word as not understood', () => {
    expect(outcomeOfStat('ACCEPTD')).toBe('intermediate');
    expect(outcomeOfStat('ENROUTE')).toBe('intermediate');
    expect(outcomeOfStat('WHATEVER')).toBeNull();
  });
});

describe('interpretReceipt', () => {
  it('uses the text when there are no TLVs', () => {
    expect(interpretReceipt({ text: STANDARD })).toMatchObject({
      carrierId: '1A2B3C4D',
      stat: 'DELIVRD',
      outcome: { state: 'delivered' },
    });
  });

  it('lets the receipted_message_id and message_state TLVs win over the text', () => {
    expect(interpretReceipt({ text: STANDARD, receiptedMessageId: '439041101', messageState: 3 })).toMatchObject({
      carrierId: '439041101',
      stat: 'EXPIRED',
      outcome: { state: 'expired' },
    });
  });

  it('returns null when no id or no state can be found', () => {
    expect(interpretReceipt({ text: 'stat:DELIVRD' })).toBeNull();
    expect(interpretReceipt({ text: 'hello' , receiptedMessageId: 'AB' })).toBeNull();
  });
});

describe('classifySubmitStatus', () => {
  it('throttles on ESME_RTHROTTLED and ESME_RMSGQFUL', () => {
    expect(classifySubmitStatus(0x58)).toEqual({ kind: 'throttled' });
    expect(classifySubmitStatus(0x14)).toEqual({ kind: 'throttled' });
  });

  it('ends the message on permanent codes, with the right reason', () => {
    expect(classifySubmitStatus(0x0a)).toMatchObject({ kind: 'permanent', outcome: { reason: 'invalid_source_address' } });
    expect(classifySubmitStatus(0x0b)).toMatchObject({ kind: 'permanent', outcome: { reason: 'delivery_impossible' } });
    expect(classifySubmitStatus(0x40)).toMatchObject({ kind: 'permanent', outcome: { reason: 'delivery_impossible' } });
    expect(classifySubmitStatus(0x101)).toMatchObject({ kind: 'permanent', outcome: { state: 'rejected', reason: 'rejected' } });
  });

  it('retries system errors and codes it does not know', () => {
    expect(classifySubmitStatus(0x08)).toEqual({ kind: 'retryable' });
    expect(classifySubmitStatus(0x45)).toEqual({ kind: 'retryable' });
    expect(classifySubmitStatus(0x401)).toEqual({ kind: 'retryable' });
  });
});

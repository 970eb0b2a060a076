/**
 * The SMPP adapter against a real SMSC (the `smpp` package's server, in a child process):
 * what the SMSC delivers: receipts, answered once handled, and mobile-originated messages.
 */
import { describe, expect, it } from 'vitest';
import { isSubmit, part, recorder, smsc, startAdapter, useSmsc, type DeliverResp } from './smpp-smsc.js';

useSmsc();

describe('SmppDelivery against a real SMSC', () => {
  it('reports an immediate receipt with the carrier id as written', async () => {
    await smsc.send({ cmd: 'set', receiptMode: 'auto' });
    const { adapter, record } = await startAdapter();
    const ack = await adapter.submit(part());
    await record.until(() => record.receipts.length === 1, 'receipt');
    expect(record.receipts[0]).toEqual({
      carrierId: ack.carrierId,
      outcome: { state: 'delivered', reason: 'delivered_to_terminal', description: 'Message delivered to terminal' },
    });
  });

  it('reports delayed receipts out of order and duplicated, each one answered', async () => {
    const from = smsc.events.length;
    const { adapter, record } = await startAdapter();
    const acks = [];
    for (let i = 0; i < 3; i++) acks.push(await adapter.submit(part({ recipient: `25470000010${i}` })));
    const [a, b, c] = acks.map((ack) => ack.carrierId) as [string, string, string];
    expect(record.receipts).toEqual([]);

    await smsc.send({ cmd: 'receipt', id: c, stat: 'UNDELIV', err: '027', tag: 'c' });
    await smsc.send({ cmd: 'receipt', id: a, stat: 'DELIVRD', tag: 'a' });
    await smsc.send({ cmd: 'receipt', id: b, stat: 'EXPIRED', tag: 'b' });
    await smsc.send({ cmd: 'receipt', id: a, stat: 'DELIVRD', tag: 'a2' });
    await record.until(() => record.receipts.length === 4, 'four receipts');
    expect(record.receipts.map((r) => [r.carrierId, r.outcome.state, r.outcome.reason])).toEqual([
      [c, 'undelivered', 'absent_subscriber'],
      [a, 'delivered', 'delivered_to_terminal'],
      [b, 'expired', 'expired'],
      [a, 'delivered', 'delivered_to_terminal'],
    ]);
    for (const tag of ['a', 'b', 'c', 'a2']) {
      const resp = await smsc.waitFor((e): e is DeliverResp => e.event === 'deliver_resp' && e.tag === tag, 5_000, from);
      expect(resp.status).toBe(0);
    }
  });

  it('passes a receipt id written in decimal through unchanged, for the core to match', async () => {
    await smsc.send({ cmd: 'set', receiptMode: 'auto', receiptIdForm: 'decimal' });
    const { adapter, record } = await startAdapter();
    const ack = await adapter.submit(part());
    await record.until(() => record.receipts.length === 1, 'receipt');
    const receipt = record.receipts[0]!;
    expect(receipt.carrierId).toBe(BigInt(`0x${ack.carrierId}`).toString(10));
    expect(receipt.carrierId).not.toBe(ack.carrierId);
  });

  it('prefers the receipted_message_id and message_state TLVs over the text', async () => {
    const { adapter, record } = await startAdapter();
    const ack = await adapter.submit(part());
    await smsc.send({ cmd: 'receipt', id: ack.carrierId, stat: 'DELIVRD', textId: 'garbage', tlvId: ack.carrierId, messageState: 5 });
    await record.until(() => record.receipts.length === 1, 'receipt');
    expect(record.receipts[0]).toMatchObject({
      carrierId: ack.carrierId,
      outcome: { state: 'undelivered', reason: 'delivery_impossible' },
    });
  });

  it('does not report an intermediate ACCEPTD receipt, but still answers it', async () => {
    const from = smsc.events.length;
    const { adapter, record } = await startAdapter();
    const ack = await adapter.submit(part());
    await smsc.send({ cmd: 'receipt', id: ack.carrierId, stat: 'ACCEPTD', tag: 'acceptd' });
    await smsc.send({ cmd: 'receipt', id: ack.carrierId, stat: 'REJECTD', tag: 'final' });
    await smsc.waitFor((e) => e.event === 'deliver_resp' && e.tag === 'acceptd' && e.status === 0, 5_000, from);
    await record.until(() => record.receipts.length === 1, 'final receipt');
    expect(record.receipts).toHaveLength(1);
    expect(record.receipts[0]!.outcome).toMatchObject({ state: 'rejected', reason: 'rejected' });
  });

  it('answers deliver_sm only after the receipt handler resolves, and with ESME_RX_T_APPN when it throws', async () => {
    const from = smsc.events.length;
    const record = recorder();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    record.gateReceipts(async (receipt) => {
      if (receipt.outcome.state === 'expired') throw new Error('storage down');
      await released;
    });
    const { adapter } = await startAdapter({}, record);
    const ack = await adapter.submit(part());

    await smsc.send({ cmd: 'receipt', id: ack.carrierId, stat: 'DELIVRD', tag: 'slow' });
    await record.until(() => record.receipts.length === 1, 'handler called');
    // A submit's round trip on the same connection: an early answer would have arrived first.
    const barrier = smsc.events.length;
    await adapter.submit(part());
    await smsc.waitFor(isSubmit, 5_000, barrier);
    expect(smsc.events.slice(from).some((e) => e.event === 'deliver_resp' && e.tag === 'slow')).toBe(false);
    release();
    const answered = await smsc.waitFor((e): e is DeliverResp => e.event === 'deliver_resp' && e.tag === 'slow', 5_000, from);
    expect(answered.status).toBe(0);

    await smsc.send({ cmd: 'receipt', id: ack.carrierId, stat: 'EXPIRED', tag: 'throws' });
    const refused = await smsc.waitFor((e): e is DeliverResp => e.event === 'deliver_resp' && e.tag === 'throws', 5_000, from);
    expect(refused.status).toBe(0x64);
    expect(record.errors.some((e) => /handler failed/.test(e.message))).toBe(true);
  });

  it('reports mobile-originated messages, GSM and UCS-2, to the inbound handler', async () => {
    const from = smsc.events.length;
    const { adapter, record } = await startAdapter();
    await adapter.waitForBind();
    const before = Date.now();
    await smsc.send({ cmd: 'mo', from: '254700000999', to: '22141', text: 'STOP please', tag: 'mo1' });
    await smsc.send({ cmd: 'mo', from: '254700000998', to: '22141', text: '\u041f\u0440\u0438\u0432\u0435\u0442', ucs2: true, tag: 'mo2' });
    await record.until(() => record.inbound.length === 2, 'two MO messages');
    expect(record.inbound.map(({ from, to, text }) => ({ from, to, text }))).toEqual([
      { from: '254700000999', to: '22141', text: 'STOP please' },
      { from: '254700000998', to: '22141', text: '\u041f\u0440\u0438\u0432\u0435\u0442' },
    ]);
    expect(record.inbound[0]!.receivedAt).toBeGreaterThanOrEqual(before);
    await smsc.waitFor((e) => e.event === 'deliver_resp' && e.tag === 'mo2' && e.status === 0, 5_000, from);
  });
});

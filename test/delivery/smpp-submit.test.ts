/**
 * The SMPP adapter against a real SMSC (the `smpp` package's server, in a child process):
 * submits: carrier ids, senders, refusals, throttling, the window and concatenation.
 */
import { describe, expect, it } from 'vitest';
import { isSubmit, partsOf, part, rejection, smsc, startAdapter, submitsSince, useSmsc } from './smpp-smsc.js';

useSmsc();

describe('SmppDelivery against a real SMSC', () => {
  it('binds as a transceiver and returns the carrier id of each submit', async () => {
    const from = smsc.events.length;
    const { adapter } = await startAdapter();
    await adapter.waitForBind();
    expect(adapter.bound).toBe(true);
    await smsc.waitFor((e) => e.event === 'bind' && e.mode === 'transceiver' && e.ok, 5_000, from);

    const ack = await adapter.submit(part({ partText: 'Hello there' }));
    const submitted = await smsc.waitFor(isSubmit, 5_000, from);
    expect(ack.carrierId).toBe(submitted.id);
    expect(submitted).toMatchObject({
      text: 'Hello there',
      sourceAddr: 'ACME',
      sourceTon: 5,
      sourceNpi: 0,
      destinationAddr: '254700000001',
      destTon: 1,
      destNpi: 1,
      esmClass: 0,
      dataCoding: 0,
      registeredDelivery: 1,
      udh: null,
      sar: null,
    });
  });

  it('sends a numeric sender of up to 8 digits as a short code and a longer one as international', async () => {
    const from = smsc.events.length;
    const { adapter } = await startAdapter();
    await adapter.submit(part({ sender: '22141' }));
    await adapter.submit(part({ sender: '+254711000000' }));
    const submits = await submitsSince(from, 2);
    expect(submits.map((s) => [s.sourceAddr, s.sourceTon, s.sourceNpi])).toEqual([
      ['22141', 3, 0],
      ['254711000000', 1, 1],
    ]);
  });

  it('refuses an alphanumeric sender longer than 11 characters as a permanent invalid source', async () => {
    const { adapter } = await startAdapter();
    const error = await rejection(adapter.submit(part({ sender: 'TWELVE_CHARS' })));
    expect(error.permanent).toBe(true);
    expect(error.outcome).toMatchObject({ state: 'rejected', reason: 'invalid_source_address' });
  });

  it('rejects ESME_RTHROTTLED and ESME_RMSGQFUL as retryable with a retry delay', async () => {
    await smsc.send({ cmd: 'status', destination: '254700000058', status: 0x58 });
    await smsc.send({ cmd: 'status', destination: '254700000014', status: 0x14 });
    try {
      const { adapter } = await startAdapter();
      for (const recipient of ['254700000058', '254700000014']) {
        const error = await rejection(adapter.submit(part({ recipient })));
        expect(error.permanent).toBe(false);
        expect(error.retryAfterMs).toBe(1_000);
        expect(error.message).toMatch(/ESME_RTHROTTLED|ESME_RMSGQFUL/);
      }
      // The bind survives a refusal.
      await expect(adapter.submit(part())).resolves.toMatchObject({ carrierId: expect.any(String) });
    } finally {
      await smsc.send({ cmd: 'status', destination: '254700000058', status: 0 });
      await smsc.send({ cmd: 'status', destination: '254700000014', status: 0 });
    }
  });

  it('rejects a permanent refusal as permanent, with the outcome the message ends in', async () => {
    await smsc.send({ cmd: 'status', destination: '254700000011', status: 0x0b });
    await smsc.send({ cmd: 'status', destination: '254700000010', status: 0x0a });
    try {
      const { adapter } = await startAdapter();
      const badDestination = await rejection(adapter.submit(part({ recipient: '254700000011' })));
      expect(badDestination.permanent).toBe(true);
      expect(badDestination.message).toMatch(/ESME_RINVDSTADR/);
      expect(badDestination.outcome).toMatchObject({ state: 'rejected', reason: 'delivery_impossible' });
      const badSource = await rejection(adapter.submit(part({ recipient: '254700000010' })));
      expect(badSource.outcome).toMatchObject({ state: 'rejected', reason: 'invalid_source_address' });
    } finally {
      await smsc.send({ cmd: 'status', destination: '254700000011', status: 0 });
      await smsc.send({ cmd: 'status', destination: '254700000010', status: 0 });
    }
  });

  it('keeps at most `window` submits in flight', async () => {
    const { adapter } = await startAdapter({ window: 2 });
    await adapter.waitForBind();
    await smsc.send({ cmd: 'set', hold: true });
    const from = smsc.events.length;
    const pending = [0, 1, 2, 3].map((i) => adapter.submit(part({ recipient: `25470000030${i}` })));
    await submitsSince(from, 2);
    // A round trip on the control channel gives a third submit the time to show up.
    await smsc.send({ cmd: 'set' });
    expect(smsc.events.slice(from).filter(isSubmit)).toHaveLength(2);
    await smsc.send({ cmd: 'set', hold: false });
    const acks = await Promise.all(pending);
    expect(new Set(acks.map((a) => a.carrierId)).size).toBe(4);
  });

  it('sends a 400-character GSM text split in 3 parts as 3 submit_sm with a concatenation UDH', async () => {
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(9).slice(0, 400);
    const parts = partsOf(text, 0x2a);
    expect(parts).toHaveLength(3);
    expect(parts[0]!.encoding).toBe('GSM-7');
    const from = smsc.events.length;
    const { adapter } = await startAdapter();
    const acks = [];
    for (const p of parts) acks.push(await adapter.submit(p));
    expect(new Set(acks.map((a) => a.carrierId)).size).toBe(3);
    const submits = await submitsSince(from, 3);
    expect(submits.map((s) => s.udh)).toEqual(['00032a0301', '00032a0302', '00032a0303']);
    for (const s of submits) {
      expect(s.esmClass & 0x40).toBe(0x40);
      expect(s.dataCoding).toBe(0);
    }
    expect(submits.map((s) => s.text).join('')).toBe(text);
  });

  it('sends a 140-unit emoji text as 3 UCS-2 parts with a concatenation UDH', async () => {
    const text = '\uD83D\uDE00'.repeat(70);
    const parts = partsOf(text, 7);
    expect(parts).toHaveLength(3);
    expect(parts[0]!.encoding).toBe('UCS-2');
    const from = smsc.events.length;
    const { adapter } = await startAdapter();
    for (const p of parts) await adapter.submit(p);
    const submits = await submitsSince(from, 3);
    expect(submits.map((s) => s.udh)).toEqual(['0003070301', '0003070302', '0003070303']);
    expect(submits.map((s) => s.dataCoding)).toEqual([8, 8, 8]);
    expect(submits.map((s) => s.text).join('')).toBe(text);
  });

  it('ties parts together with SAR TLVs when asked, and sends a single part without either', async () => {
    const text = 'x'.repeat(200);
    const from = smsc.events.length;
    const { adapter } = await startAdapter({ concatenation: 'sar' });
    for (const p of partsOf(text, 9)) await adapter.submit(p);
    await adapter.submit(part({ partText: 'single' }));
    const submits = await submitsSince(from, 3);
    expect(submits.map((s) => [s.udh, s.esmClass, s.sar])).toEqual([
      [null, 0, { ref: 9, total: 2, seq: 1 }],
      [null, 0, { ref: 9, total: 2, seq: 2 }],
      [null, 0, null],
    ]);
  });
});

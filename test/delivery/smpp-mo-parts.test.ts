/**
 * Long MO messages: where a part sits (UDH 8- and 16-bit references, SAR TLVs), the whole
 * text delivered once in order whatever order the parts came in, a part sent twice counted
 * once, a message whose last part never comes passed on as it is after the wait, and the
 * parts held refused at close.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { InboundMessage } from '../../src/index.js';
import { moPartOf } from '../../src/delivery/smpp/mo-parts.js';
import { MoReassembly } from '../../src/inbound/parts-in-memory.js';

const at = 1_700_000_000_000;
const part = (text: string): InboundMessage => ({ from: '254700000001', to: '22021', text, receivedAt: at });

afterEach(() => {
  vi.useRealTimers();
});

describe('moPartOf', () => {
  it('reads the 8-bit and 16-bit UDH concatenation elements and the SAR TLVs', () => {
    expect(moPartOf({ short_message: { udh: [Buffer.from('0003a70302', 'hex')] } })).toEqual({ ref: 0xa7, total: 3, seq: 2 });
    expect(moPartOf({ short_message: { udh: [Buffer.from('0804beef0201', 'hex')] } })).toEqual({ ref: 0xbeef, total: 2, seq: 1 });
    expect(moPartOf({ sar_msg_ref_num: 300, sar_total_segments: 2, sar_segment_seqnum: 2 })).toEqual({ ref: 300, total: 2, seq: 2 });
  });

  it('is null for a message of one part, or a place that makes no sense', () => {
    expect(moPartOf({ short_message: 'plain' })).toBeNull();
    expect(moPartOf({ short_message: { udh: [Buffer.from('0003a70101', 'hex')] } })).toBeNull();
    expect(moPartOf({ short_message: { udh: [Buffer.from('0003a70203', 'hex')] } })).toBeNull();
    expect(moPartOf({ sar_msg_ref_num: 1, sar_total_segments: 2 })).toBeNull();
  });
});

describe('MoReassembly', () => {
  it('delivers the whole text once, in order, and settles every part with its result', async () => {
    const reassembly = new MoReassembly(10_000);
    const delivered: string[] = [];
    const deliver = async (whole: InboundMessage) => void delivered.push(whole.text);
    const third = reassembly.add({ ref: 1, total: 3, seq: 3 }, part('!'), deliver);
    const first = reassembly.add({ ref: 1, total: 3, seq: 1 }, part('Hello '), deliver);
    // Sent again before its answer: the same part, not a fourth.
    const againFirst = reassembly.add({ ref: 1, total: 3, seq: 1 }, part('Hello '), deliver);
    expect(delivered).toEqual([]);
    const second = reassembly.add({ ref: 1, total: 3, seq: 2 }, part('world'), deliver);
    await Promise.all([first, second, third, againFirst]);
    expect(delivered).toEqual(['Hello world!']);
  });

  it('refuses every part when the whole could not be stored, so the SMSC sends them again', async () => {
    const reassembly = new MoReassembly(10_000);
    const failing = async () => {
      throw new Error('storage down');
    };
    const parts = [reassembly.add({ ref: 2, total: 2, seq: 1 }, part('a'), failing), reassembly.add({ ref: 2, total: 2, seq: 2 }, part('b'), failing)];
    for (const settled of await Promise.allSettled(parts)) expect(settled.status).toBe('rejected');
  });

  it('passes on the parts that came once the wait is over, and refuses those held at close', async () => {
    vi.useFakeTimers();
    const reassembly = new MoReassembly(10_000);
    const delivered: string[] = [];
    const deliver = async (whole: InboundMessage) => void delivered.push(whole.text);
    const lonely = reassembly.add({ ref: 3, total: 3, seq: 1 }, part('only the start, '), deliver);
    void reassembly.add({ ref: 3, total: 3, seq: 3 }, part('and the end'), deliver);
    await vi.advanceTimersByTimeAsync(10_000);
    await lonely;
    expect(delivered).toEqual(['only the start, and the end']);
    const held = reassembly.add({ ref: 4, total: 2, seq: 1 }, part('x'), deliver);
    reassembly.close();
    await expect(held).rejects.toThrow(/closed/);
  });
});

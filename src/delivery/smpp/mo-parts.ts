/**
 * Concatenated mobile-originated messages: a long MO arrives as several `deliver_sm`, each
 * carrying its place either in a UDH concatenation element (8-bit or 16-bit reference) or in
 * the SAR TLVs, which `moPartOf` reads. The adapter reports each part with its place; the
 * inbound handler joins them (src/inbound/parts.ts).
 */
import type { InboundPartPlace } from '../contract.js';

/** Where a part sits in its message. */
export type MoPart = InboundPartPlace;

/** What a `deliver_sm` carries that tells its place; the `smpp` package's decoded fields. */
export interface MoPartFields {
  short_message?: unknown;
  sar_msg_ref_num?: unknown;
  sar_total_segments?: unknown;
  sar_segment_seqnum?: unknown;
}

/** The place of a part in a concatenated message, or `null` for a message of one part. */
export function moPartOf(pdu: MoPartFields): MoPart | null {
  const udh = (pdu.short_message as { udh?: unknown } | undefined)?.udh;
  if (Array.isArray(udh)) {
    for (const element of udh as unknown[]) {
      if (!Buffer.isBuffer(element)) continue;
      // 00: 8-bit reference (length 3); 08: 16-bit reference (length 4).
      if (element[0] === 0x00 && element[1] === 3 && element.length >= 5) return checked(element[2]!, element[3]!, element[4]!);
      if (element[0] === 0x08 && element[1] === 4 && element.length >= 6) return checked(element.readUInt16BE(2), element[4]!, element[5]!);
    }
  }
  const { sar_msg_ref_num: ref, sar_total_segments: total, sar_segment_seqnum: seq } = pdu;
  if (typeof ref === 'number' && typeof total === 'number' && typeof seq === 'number') return checked(ref, total, seq);
  return null;
}

function checked(ref: number, total: number, seq: number): MoPart | null {
  return total >= 2 && seq >= 1 && seq <= total ? { ref, total, seq } : null;
}

/**
 * Concatenated mobile-originated messages: a long MO arrives as several `deliver_sm`, each
 * carrying its place either in a UDH concatenation element (8-bit or 16-bit reference) or in
 * the SAR TLVs, which `moPartOf` reads.
 *
 * `MoReassembly` joins parts in one process's memory: the router's way for a storage that
 * cannot keep parts (without `storeInboundPart`). The parts are held, unanswered, until the
 * last one arrives; the whole text then goes on once, and every part is answered with its
 * result, so the SMSC re-sends them all if it could not be stored. Parts whose siblings do
 * not come within the wait are handed on as they are, joined in order, rather than lost.
 */
import type { InboundMessage, InboundPartPlace } from '../contract.js';

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

/** The parts of one message received so far, and the deliveries waiting for its end. */
interface Group {
  first: InboundMessage;
  total: number;
  texts: Map<number, string>;
  waiters: { resolve: () => void; reject: (error: unknown) => void }[];
  timer: NodeJS.Timeout;
}

/** Holds the parts of concatenated MO messages until each message is whole. */
export class MoReassembly {
  readonly #waitMs: number;
  readonly #groups = new Map<string, Group>();

  /** `waitMs`: how long a message's first part waits for the others before it goes on alone. */
  constructor(waitMs: number) {
    this.#waitMs = waitMs;
  }

  /**
   * Adds part `part` of `message` (its text is the part's). Resolves or rejects as
   * `deliver` does with the whole message, once it is whole (or its wait is over).
   */
  add(part: MoPart, message: InboundMessage, deliver: (whole: InboundMessage) => Promise<void>): Promise<void> {
    const key = `${message.from}\n${message.to}\n${part.ref}\n${part.total}`;
    let group = this.#groups.get(key);
    if (group === undefined) {
      const timer = setTimeout(() => this.#finish(key, deliver), this.#waitMs);
      timer.unref();
      // The whole message has no place of its own.
      const { part: _place, ...first } = message;
      group = { first, total: part.total, texts: new Map(), waiters: [], timer };
      this.#groups.set(key, group);
    }
    // A part sent again (its answer was late) replaces itself.
    group.texts.set(part.seq, message.text);
    const done = new Promise<void>((resolve, reject) => group.waiters.push({ resolve, reject }));
    if (group.texts.size === group.total) this.#finish(key, deliver);
    return done;
  }

  /** Refuses every part held (the SMSC sends them again, to this bind later or to another). */
  close(): void {
    for (const group of this.#groups.values()) {
      clearTimeout(group.timer);
      for (const waiter of group.waiters) waiter.reject(new Error('SMPP adapter closed while a multipart MO message was incomplete'));
    }
    this.#groups.clear();
  }

  #finish(key: string, deliver: (whole: InboundMessage) => Promise<void>): void {
    const group = this.#groups.get(key);
    if (group === undefined) return;
    this.#groups.delete(key);
    clearTimeout(group.timer);
    const text = [...group.texts.entries()].sort(([a], [b]) => a - b).map(([, t]) => t).join('');
    const settled = deliver({ ...group.first, text });
    for (const waiter of group.waiters) settled.then(waiter.resolve, waiter.reject);
  }
}

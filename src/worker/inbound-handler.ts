/**
 * What happens to a mobile-originated (MO) message the carrier delivers: it is announced
 * (`message.inbound`), stored with the webhook that forwards it to the customer owning the
 * short code, and, when its whole text is a stop or start keyword, opts its sender out of
 * that short code (or back in) in the same atomic step. The promise the carrier's adapter
 * waits on resolves only once all of it is stored, so the carrier is answered after that,
 * as a receipt is.
 */
import { randomUUID } from 'node:crypto';
import type { InboundMessage } from '../delivery/contract.js';
import type { Emit } from '../observe/events.js';
import type { InboundRecord, InsertLease, NewInbound, Storage } from '../storage/contract.js';

/** Where an inbound message sent to a short code goes: its owner, and the owner's inbound URL. */
export interface InboundTarget {
  /** The owning principal. */
  principalId: string;
  /** The owner's profile for the short code. */
  profileCode: string;
  /** The inbound URL (the profile's, else the principal's), or `null`: stored, not forwarded. */
  url: string | null;
  /** Signs the webhook (the principal's `callbackSecret`), or `null` for the router's `dlr.secret`. */
  secret: string | null;
}

/** What a keyword does: `stop` opts out, `start` back in. */
export type Keyword = 'stop' | 'start';

/** What the inbound handler needs from the router. */
export interface InboundHandlerDeps {
  /** Where inbound messages and opt-outs are stored. */
  storage: Storage;
  /** Emits `message.inbound` and the `subscriber.*` events. */
  emit: Emit;
  /** The clock, epoch ms. */
  now: () => number;
  /** The owner of a short code, or `null`. */
  target: (to: string) => Promise<InboundTarget | null>;
  /** The keyword a text is (whole text, case and surrounding space ignored), or `null`. */
  keyword: (text: string) => Keyword | null;
  /** A lease to store the webhook under, handed to this instance's sender at once; `undefined`: no room. */
  webhookLease: (now: number) => InsertLease | undefined;
  /** Sends a webhook stored under a lease from `webhookLease`. */
  handOver: (inbound: InboundRecord, until: number) => void;
  /** A webhook was stored unleased: the sender claims soon. */
  wake: () => void;
  /** Sends the confirmation of a keyword, when one is configured (its failures are its own). */
  confirm: (keyword: Keyword, shortCode: string, number: string, target: InboundTarget | null) => void;
}

/** A number or address as the carrier wrote it, without spaces or a leading `+`. */
export function plainAddress(address: string): string {
  return address.trim().replace(/^\+/, '');
}

/** Stores, forwards and acts on the MO messages the carrier delivers. */
export class InboundHandler {
  readonly #deps: InboundHandlerDeps;

  constructor(deps: InboundHandlerDeps) {
    this.#deps = deps;
  }

  /**
   * Handles one MO message; resolves once it is stored (and its opt-out change with it).
   * Rejects when it could not be: the carrier's adapter then refuses it transiently, so the
   * carrier delivers it again. A storage without the inbound methods only announces it.
   */
  async receive(message: InboundMessage): Promise<void> {
    const { storage, emit } = this.#deps;
    emit('message.inbound', message);
    if (storage.insertInbound === undefined) return;
    const from = plainAddress(message.from);
    const to = plainAddress(message.to);
    const target = await this.#deps.target(to);
    const keyword = this.#deps.keyword(message.text);
    const url = target?.url ?? null;
    const lease = url === null ? undefined : this.#deps.webhookLease(this.#deps.now());
    const inbound: NewInbound = {
      ref: randomUUID(),
      principalId: target?.principalId ?? null,
      profileCode: target?.profileCode ?? null,
      from,
      to,
      text: message.text,
      receivedAt: message.receivedAt,
      callbackUrl: url,
      callbackSecret: url === null ? null : (target?.secret ?? null),
      uid: url === null ? null : randomUUID(),
    };
    const optOut = keyword === null ? undefined : keyword === 'stop';
    const { optOutChanged } = await storage.insertInbound(inbound, { lease, optOut });
    if (url !== null) {
      if (lease !== undefined) {
        const record: InboundRecord = {
          ...inbound,
          callback: { state: 'pending', attempts: 0, lastStatusCode: null, lastError: null, nextAttemptAt: inbound.receivedAt },
        };
        this.#deps.handOver(record, lease.until);
      } else {
        this.#deps.wake();
      }
    }
    if (keyword === null) return;
    if (optOutChanged) {
      const event = { shortCode: to, number: from, source: 'keyword' as const, inboundRef: inbound.ref, at: inbound.receivedAt };
      emit(keyword === 'stop' ? 'subscriber.opted_out' : 'subscriber.opted_in', event);
    }
    this.#deps.confirm(keyword, to, from, target);
  }
}

/** A keyword as compared: upper case, inner runs of space as one, no surrounding space. */
export function keywordForm(text: string): string {
  return text.trim().replace(/\s+/g, ' ').toUpperCase();
}

/** Returns the function that tells which keyword a text is, for these stop and start keywords. */
export function keywordMatcher(stop: readonly string[], start: readonly string[]): (text: string) => Keyword | null {
  const stops = new Set(stop.map(keywordForm));
  const starts = new Set(start.map(keywordForm));
  return (text) => {
    // A keyword is short: a long text is a message, never a keyword, however it ends.
    if (text.length > 64) return null;
    const form = keywordForm(text);
    return stops.has(form) ? 'stop' : starts.has(form) ? 'start' : null;
  };
}

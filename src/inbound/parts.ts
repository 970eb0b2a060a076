/**
 * Joining the parts of long (concatenated) MO messages. A carrier may spread one message's
 * parts over several binds, and so over several instances: each part is stored
 * (`storeInboundPart`) and answered once stored, and the instance whose part makes the
 * message whole, whichever it is, passes the whole message on. The storage keeps the parts;
 * which of them make one message, and whether it is whole, is decided here.
 *
 * A message whose other parts do not come within the wait is passed on as the parts stored
 * make it, joined in order, by each instance that holds one of its parts (the texts are the
 * same, so the router's redelivery check stores it once). A storage without
 * `storeInboundPart` gets the parts joined in this process's memory (parts-in-memory.ts).
 */
import { createHash } from 'node:crypto';
import type { InboundMessage, InboundPartPlace } from '../delivery/contract.js';
import { MoReassembly } from './parts-in-memory.js';
import type { InboundPart } from '../storage/contract.js';
import { plainAddress } from './text.js';

/**
 * How long parts joined in memory wait for the others, ms: they are held unanswered, so
 * within the response time an SMSC allows, after which they go on as they are.
 */
const HELD_UNANSWERED_MS = 10_000;

/** What the parts need from the inbound handler. */
export interface InboundPartsDeps {
  /** The storage's part store, or `null`: parts are joined in memory. */
  storePart: ((part: InboundPart) => Promise<InboundPart[]>) | null;
  /** Takes a whole message (stores and forwards it); a rejection is the part's. */
  deliver: (whole: InboundMessage) => Promise<void>;
  /** A message passed on after its wait could not be stored. */
  error: (error: unknown) => void;
  /** How long a message's parts wait for the others on this instance, ms. */
  waitMs: number;
  /**
   * How far apart in time the parts of one message may arrive, ms: a stored part older than
   * that is of an earlier message that reused the carrier's reference.
   */
  spanMs: number;
}

/** A message's wait on this instance: the latest part it stored, and the timer. */
interface Waiting {
  part: InboundPart;
  from: string;
  to: string;
  timer: NodeJS.Timeout;
}

/** The key of a long message's parts: sender, recipient, the carrier's reference and part count. */
export function inboundPartKey(from: string, to: string, place: InboundPartPlace): string {
  return createHash('sha256').update(`${from}\n${to}\n${place.ref}\n${place.total}`).digest('hex');
}

/**
 * The parts, of those stored, that belong to the message of `latest` (received within
 * `spanMs` of it, one per number), in order; and whether they make it whole.
 */
export function partsOfMessage(stored: readonly InboundPart[], latest: InboundPart, spanMs: number): { parts: InboundPart[]; whole: boolean } {
  const bySeq = new Map<number, InboundPart>();
  for (const part of stored) {
    if (part.total !== latest.total || Math.abs(latest.receivedAt - part.receivedAt) > spanMs) continue;
    if (part.seq < 1 || part.seq > latest.total) continue;
    bySeq.set(part.seq, part);
  }
  const parts = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  return { parts, whole: parts.length === latest.total };
}

/** Joins the parts of long MO messages (see the module comment). */
export class InboundParts {
  readonly #deps: InboundPartsDeps;
  readonly #waiting = new Map<string, Waiting>();
  readonly #memory: MoReassembly;
  #closed = false;

  constructor(deps: InboundPartsDeps) {
    this.#deps = deps;
    this.#memory = new MoReassembly(Math.min(deps.waitMs, HELD_UNANSWERED_MS));
  }

  /**
   * Takes one part (`message.text` is the part's). Resolves
   * once the part is stored, and, when it made its message whole, once that is stored too;
   * rejects when either could not be, so the carrier delivers the part again.
   */
  async add(message: InboundMessage, place: InboundPartPlace): Promise<void> {
    if (this.#closed) throw new Error('sms-outbox: the router is closing; the MO part is refused, so the carrier delivers it again');
    const { storePart, deliver, spanMs } = this.#deps;
    if (storePart === null) return this.#memory.add(place, message, deliver);
    const key = inboundPartKey(plainAddress(message.from), plainAddress(message.to), place);
    const part: InboundPart = { key, seq: place.seq, total: place.total, text: message.text, receivedAt: message.receivedAt };
    const { parts, whole } = partsOfMessage(await storePart(part), part, spanMs);
    if (!whole) {
      this.#wait(part, message.from, message.to);
      return;
    }
    this.#stopWaiting(key);
    await deliver(joined(message.from, message.to, parts));
  }

  /** Stops every wait, and refuses the parts held in memory (the carrier sends them again). */
  close(): void {
    this.#closed = true;
    for (const waiting of this.#waiting.values()) clearTimeout(waiting.timer);
    this.#waiting.clear();
    this.#memory.close();
  }

  #wait(part: InboundPart, from: string, to: string): void {
    this.#stopWaiting(part.key);
    const timer = setTimeout(() => void this.#waitOver(part.key), this.#deps.waitMs);
    timer.unref();
    this.#waiting.set(part.key, { part, from, to, timer });
  }

  #stopWaiting(key: string): void {
    const waiting = this.#waiting.get(key);
    if (waiting === undefined) return;
    clearTimeout(waiting.timer);
    this.#waiting.delete(key);
  }

  /** The wait is over: the message goes on as its stored parts make it, unless it became whole meanwhile. */
  async #waitOver(key: string): Promise<void> {
    const waiting = this.#waiting.get(key);
    if (waiting === undefined || this.#closed) return;
    this.#waiting.delete(key);
    try {
      // Storing the same part again changes nothing and reads the parts stored since.
      const { parts, whole } = partsOfMessage(await this.#deps.storePart!(waiting.part), waiting.part, this.#deps.spanMs);
      // Whole: the instance whose part made it so passed it on (or its part is refused and comes again).
      if (whole || this.#closed) return;
      await this.#deps.deliver(joined(waiting.from, waiting.to, parts));
    } catch (error) {
      this.#deps.error(error);
    }
  }
}

/** The message the parts make: their texts in order, received when the first of them was. */
function joined(from: string, to: string, parts: readonly InboundPart[]): InboundMessage {
  return {
    from,
    to,
    text: parts.map((p) => p.text).join(''),
    receivedAt: Math.min(...parts.map((p) => p.receivedAt)),
  };
}

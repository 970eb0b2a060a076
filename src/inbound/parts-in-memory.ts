/**
 * Joining the parts of long MO messages in one process's memory: the way for a storage that
 * cannot keep parts (without `storeInboundPart`). The parts are held, unanswered, until the
 * last one arrives; the whole text then goes on once, and every part is answered with its
 * result, so the SMSC re-sends them all if it could not be stored. Parts whose siblings do
 * not come within the wait are handed on as they are, joined in order, rather than lost.
 */
import type { InboundMessage, InboundPartPlace } from '../delivery/contract.js';

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
  add(part: InboundPartPlace, message: InboundMessage, deliver: (whole: InboundMessage) => Promise<void>): Promise<void> {
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
      for (const waiter of group.waiters) waiter.reject(new Error('sms-outbox: the router closed while a long MO message was incomplete; its parts are refused, so the carrier delivers them again'));
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

/**
 * The dashboard's view of the premium MO flow: the newest inbound messages of the demo
 * principal (with their webhook's state) and the opt-out list, read from storage when a page
 * connects and again whenever an event says either changed.
 */
import type { InboundRecord, OptOutEntry, SmsRouter, Storage } from '../../src/index.js';

/** What the page's inbound section shows. */
export interface InboundSnapshot {
  /** The newest inbound messages, newest first. */
  messages: InboundRecord[];
  /** The opt-out list, by short code then number (the first {@link LISTED} entries). */
  optOuts: OptOutEntry[];
}

/** How many inbound messages, and opt-out entries, the page shows. */
export const LISTED = 20;

/** The events after which the section is read again. */
const CHANGES = ['message.inbound', 'inbound.sent', 'inbound.retrying', 'inbound.failed', 'subscriber.opted_out', 'subscriber.opted_in'] as const;

/** Reads and watches the inbound messages and the opt-out list. */
export class InboundView {
  readonly #sms: SmsRouter;
  readonly #storage: Storage;
  readonly #principalId: string;
  readonly #listeners = new Set<(snapshot: InboundSnapshot) => void>();
  #scheduled = false;

  constructor(sms: SmsRouter, storage: Storage, principalId: string) {
    this.#sms = sms;
    this.#storage = storage;
    this.#principalId = principalId;
    const changed = () => this.#changed();
    for (const name of CHANGES) sms.on(name, changed);
  }

  /** The section now; `null` when the storage keeps no inbound messages. */
  async current(): Promise<InboundSnapshot | null> {
    if (this.#storage.listInbound === undefined) return null;
    const [messages, optOuts] = await Promise.all([
      this.#storage.listInbound({ principalId: this.#principalId, limit: LISTED }),
      this.#sms.optOuts.list({ limit: LISTED }),
    ]);
    return { messages, optOuts };
  }

  /** Calls `listener` with the section after each change; returns the unsubscribe. */
  subscribe(listener: (snapshot: InboundSnapshot) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Reads again once the events of this turn are in (a STOP is an MO and an opt-out at once). */
  #changed(): void {
    if (this.#scheduled || this.#listeners.size === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.current().then(
        (snapshot) => {
          if (snapshot !== null) for (const listener of this.#listeners) listener(snapshot);
        },
        () => undefined,
      );
    });
  }
}

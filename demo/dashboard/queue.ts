/**
 * The dashboard's queue view: how many messages wait for the carrier, by class, and how
 * long the oldest has waited. Fed by the router's `queue.depth` event (a sample every 5 s
 * while someone listens), with a count of its own when a page connects, so a new page shows
 * the queue at once instead of after the next sample.
 */
import type { QueueDepthEvent, SmsRouter, Storage } from '../../src/index.js';

/** One queue sample as the page gets it: the `queue.depth` payload. */
export type QueueSample = QueueDepthEvent;

/** Called with each new sample. */
export type QueueListener = (sample: QueueSample) => void;

/** Keeps the latest queue sample and tells listeners of each new one. */
export class QueueView {
  readonly #listeners = new Set<QueueListener>();

  constructor(
    sms: SmsRouter,
    private readonly storage: Storage,
    private readonly now: () => number = Date.now,
  ) {
    // One listener for every page: it is also what keeps the router sampling.
    sms.on('queue.depth', (sample) => {
      for (const listener of this.#listeners) listener(sample);
    });
  }

  /** Subscribes to samples; returns the unsubscribe function. */
  subscribe(listener: QueueListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * A sample taken now, for a page that just connected; `null` when the storage cannot
   * count its queue (`countQueued` is optional), and then the page shows no queue.
   */
  async current(): Promise<QueueSample | null> {
    if (this.storage.countQueued === undefined) return null;
    return { ...(await this.storage.countQueued()), at: this.now() };
  }
}

/** A carrier that accepts every part at once and keeps them, in order, for a test to read. */
import type { DeliveryAdapter, OutgoingPart } from '../../src/index.js';

/** Accepts each part with carrier id `c-<n>` (counted from 1) and records it in `accepted`. */
export class RecordingCarrier implements DeliveryAdapter {
  readonly accepted: OutgoingPart[] = [];
  async start(): Promise<void> {}
  async submit(part: OutgoingPart) {
    this.accepted.push(part);
    return { carrierId: `c-${this.accepted.length}` };
  }
  async close(): Promise<void> {}
}

/**
 * A carrier that holds submits at a gate until the test opens it, to fill the worker's
 * slots on purpose. Carrier ids are `gated-1`, `gated-2`, ... in submit order.
 */
import type { DeliveryAdapter, OutgoingPart, SubmitAck } from '../../src/index.js';

export class GatedDelivery implements DeliveryAdapter {
  /** Refs of the parts submitted, in the order their submit was called. */
  readonly submitted: string[] = [];
  /** Lets every held submit, and every later one, through. */
  open: () => void = () => {};
  readonly #gate = new Promise<void>((resolve) => (this.open = resolve));

  /** @param holds Which submits wait at the gate: every one, or only the first. */
  constructor(private readonly holds: 'all' | 'first' = 'all') {}

  async start(): Promise<void> {}

  async submit(part: OutgoingPart): Promise<SubmitAck> {
    this.submitted.push(part.ref);
    const id = `gated-${this.submitted.length}`;
    if (this.holds === 'all' || this.submitted.length === 1) await this.#gate;
    return { carrierId: id };
  }

  async close(): Promise<void> {}
}

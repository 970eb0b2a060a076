/**
 * A delivery adapter whose receipts the test sends by hand, to drive exact receipt orders
 * (late, duplicate, out of order). The simulator covers the realistic path.
 */
import type { CarrierReceipt, DeliveryAdapter, DeliveryHandlers, OutgoingPart, SubmitAck } from '../../src/index.js';

export class ScriptedDelivery implements DeliveryAdapter {
  readonly submitted: (OutgoingPart & { carrierId: string })[] = [];
  #handlers: DeliveryHandlers | null = null;
  #next = 0x1f0;
  /** Called before each submit; throw from it to fail that submit. */
  beforeSubmit: (part: OutgoingPart) => void = () => {};

  async start(handlers: DeliveryHandlers): Promise<void> {
    this.#handlers = handlers;
  }

  async submit(part: OutgoingPart): Promise<SubmitAck> {
    this.beforeSubmit(part);
    const carrierId = (this.#next++).toString(16).toUpperCase();
    this.submitted.push({ ...part, carrierId });
    return { carrierId };
  }

  /** Sends a receipt as the carrier would. */
  receipt(receipt: CarrierReceipt): Promise<void> {
    return this.#handlers!.receipt(receipt);
  }

  async close(): Promise<void> {}
}

/**
 * A gateway for the inbound tests that run on each storage: the simulated carrier, one
 * principal owning the short code and forwarding its MO messages to the test's receiver.
 */
import { createSmsRouter, SimulatorDelivery, staticKeys, type SmsRouter, type Storage } from '../../src/index.js';

/** The short code the gateway's principal owns. */
export const SHORT_CODE = '22021501';

/** A started gateway on `storage`, forwarding to `inboundUrl`. */
export async function gatewayOn(storage: Storage, inboundUrl: string): Promise<{ sms: SmsRouter; delivery: SimulatorDelivery; storage: Storage }> {
  const delivery = new SimulatorDelivery({ seed: 5, latencyMs: [1, 5] });
  const sms = createSmsRouter({
    verifyKey: staticKeys([{ key: 'inbound-kinds-key', id: 'acme', profiles: [SHORT_CODE], inboundUrl }]),
    storage,
    delivery,
    worker: { pollIntervalMs: 20 },
    dlr: { allowPrivateAddresses: true, schedule: [0, 30, 30], pollIntervalMs: 20 },
  });
  await sms.ready();
  return { sms, delivery, storage };
}

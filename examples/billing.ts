/**
 * Example: billing. Each customer is charged `sms_count` units when a message is accepted
 * (what real clients of the original service read to bill), and refunded when the message
 * ends without reaching the network (`rejected` by the carrier, or `failed` after retries).
 * The delivery reports sent to customers carry the same outcomes.
 *
 * Run it: `npx tsx examples/billing.ts` (on `PORT`, default 3000). In your app, import from
 * `sms-outbox` instead of `../src/index.js`, and keep the ledger in your database.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import express from 'express';
import { createSmsRouter, SimulatorDelivery, staticKeys, type DeliveryAdapter, type TerminalState } from '../src/index.js';

/** Outcomes that cost the operator nothing, so the customer gets the units back. */
const REFUNDED: ReadonlySet<TerminalState> = new Set(['rejected', 'failed']);

/** One ledger line. */
export interface LedgerEntry {
  customerId: string;
  messageRef: string;
  /** Positive: a charge; negative: a refund. */
  units: number;
}

/** Starts a gateway that bills into an in-memory ledger. */
export async function startBilling(options: { port?: number; apiKey: string; delivery?: DeliveryAdapter }) {
  const sms = createSmsRouter({
    verifyKey: staticKeys([{ key: options.apiKey, id: 'acme', profiles: ['12345'] }]),
    delivery: options.delivery ?? new SimulatorDelivery(),
  });
  const ledger: LedgerEntry[] = [];

  // One `message.accepted` per message, emitted once it is stored: no double charge.
  sms.on('message.accepted', ({ message }) => {
    ledger.push({ customerId: message.principalId, messageRef: message.ref, units: message.smsCount });
  });
  // `message.status` fires once per transition; a terminal state is reached once.
  sms.on('message.status', ({ message }) => {
    if (REFUNDED.has(message.state as TerminalState)) {
      ledger.push({ customerId: message.principalId, messageRef: message.ref, units: -message.smsCount });
    }
  });

  const app = express();
  app.use(sms);
  const server = app.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ledger,
    /** The customer's units used so far. */
    balance: (customerId: string) => ledger.filter((e) => e.customerId === customerId).reduce((sum, e) => sum + e.units, 0),
    async stop() {
      await new Promise((resolve) => server.close(resolve));
      await sms.close();
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const billing = await startBilling({ port: Number(process.env.PORT || 3000), apiKey: 'example-key' });
  setInterval(() => console.log(`acme has used ${billing.balance('acme')} SMS units`), 5000).unref();
  console.log(`listening on ${billing.url} (X-API-Key: example-key)`);
}

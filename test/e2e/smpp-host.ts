/**
 * An e2e host process with a real carrier link: the router on 127.0.0.1 port 0 with durable
 * storage (SQLite file or PostgreSQL schema) and `SmppDelivery` to the test SMSC whose port
 * the JSON config in SMS_OUTBOX_E2E_HOST names (`smsc.port`). The SMSC runs in the test's
 * process tree, not here, so a SIGKILL of this host leaves it running with the receipts it
 * still has to deliver, as a carrier would. The same config and output as
 * test/fixtures/gateway-host.ts otherwise (see `HostLine` in test/e2e/host-process.ts):
 * its port, each part the SMSC accepted, the router's `error` events. SIGTERM closes it
 * cleanly.
 */
import express from 'express';
import type pg from 'pg';
import { makePool } from '../helpers/services.js';
import {
  createSmsRouter,
  staticKeys,
  type DeliveryAdapter,
  type DeliveryHandlers,
  type OutgoingPart,
  type Storage,
  type SubmitAck,
} from '../../src/index.js';
import { PostgresStorage } from '../../src/postgres.js';
import { SmppDelivery } from '../../src/smpp.js';
import { SqliteStorage } from '../../src/sqlite.js';
import {
  HOST_CONFIG_ENV,
  HOST_KEY,
  HOST_PRINCIPAL,
  HOST_PROFILE,
  hostApplicationName,
  type HostConfig,
  type HostLine,
} from './host-process.js';

function print(line: HostLine): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** The SMPP adapter, seen from the router: every accepted part is printed as it is acked. */
class PrintingDelivery implements DeliveryAdapter {
  readonly #carrier: DeliveryAdapter;

  constructor(carrier: DeliveryAdapter) {
    this.#carrier = carrier;
  }

  start(handlers: DeliveryHandlers): Promise<void> {
    return this.#carrier.start(handlers);
  }

  async submit(part: OutgoingPart): Promise<SubmitAck> {
    const ack = await this.#carrier.submit(part);
    print({ event: 'submit', ref: part.ref, index: part.index, carrierId: ack.carrierId });
    return ack;
  }

  close(): Promise<void> {
    return this.#carrier.close();
  }
}

const raw = process.env[HOST_CONFIG_ENV];
if (raw === undefined) throw new Error(`${HOST_CONFIG_ENV} is required (a JSON HostConfig)`);
const config = JSON.parse(raw) as HostConfig;
if (config.smsc === undefined) throw new Error('smpp-host needs `smsc.port` in its config');

let pool: pg.Pool | null = null;
let storage: Storage;
if (config.storage.kind === 'sqlite') {
  storage = new SqliteStorage({ path: config.storage.path });
} else {
  // Named, so a test can tell when PostgreSQL has finished what a killed host had sent.
  pool = makePool(8, hostApplicationName(config.instanceId));
  storage = new PostgresStorage({ pool, schema: config.storage.schema });
}

const sms = createSmsRouter({
  verifyKey: staticKeys([{ key: HOST_KEY, id: HOST_PRINCIPAL, profiles: [HOST_PROFILE] }]),
  storage,
  delivery: new PrintingDelivery(
    new SmppDelivery({
      url: `smpp://e2e-host:secret@127.0.0.1:${config.smsc.port}`,
      // A restarted host binds again within a fraction of a second.
      reconnectMinMs: 100,
      reconnectMaxMs: 500,
      waitTimeoutMs: 2_000,
      responseTimeoutMs: 5_000,
    }),
  ),
  ...(config.instanceId === undefined ? {} : { instanceId: config.instanceId }),
  // Short leases and delays, so work a killed host held is taken up again within seconds.
  worker: { pollIntervalMs: 50, leaseMs: 2_000, retryBaseMs: 50, retryMaxMs: 500, concurrency: 32, ...config.worker },
  dlr: {
    allowPrivateAddresses: ['127.0.0.0/8'],
    schedule: [0, 100, 200, 400, 800, 1_000, 1_000, 1_000, 1_000, 1_000],
    timeoutMs: 2_000,
    leaseMs: 3_000,
    pollIntervalMs: 50,
    concurrency: 16,
    perHostConcurrency: 16,
    ...config.dlr,
  },
  retention: false,
  // The tests drive far more than a client's fair share through one key on purpose.
  rateLimit: false,
});
sms.on('error', ({ error, source, ref }) => {
  print({ event: 'error', source, ...(ref === undefined ? {} : { ref }), message: error instanceof Error ? error.message : String(error) });
});
await sms.ready();

const app = express();
app.use(sms);
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const address = server.address();
print({ event: 'listening', port: typeof address === 'object' && address !== null ? address.port : 0 });

process.once('SIGTERM', () => {
  void (async () => {
    server.close();
    server.closeAllConnections();
    await sms.close();
    await pool?.end();
    print({ event: 'closed' });
    process.exit(0);
  })();
});

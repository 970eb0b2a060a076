/**
 * Example: a delivery adapter for a carrier with an HTTP API, the common case after SMPP.
 * Parts go out as `POST <apiUrl>/messages` (the carrier answers `{ "id" }`); the carrier
 * later POSTs a signed delivery report `{ "id", "status" }` to a URL of ours, which the
 * adapter serves through `routes()`: the router mounts it at its `carrierPath` (default
 * `<basePath>/carrier`), so the carrier is given `https://<host>/api/outbox/carrier/receipts`.
 *
 * The report's signature is `X-Carrier-Signature: t=<unix seconds>,v1=<hex>`, the HMAC-SHA256
 * of `<t>.<raw body>` under the secret the carrier issued; a report signed more than five
 * minutes off is refused, which stops replays. Real carriers differ in names, not in shape.
 *
 * Run it: `CARRIER_URL=https://carrier.example/v1 CARRIER_TOKEN=... CARRIER_SECRET=... npx tsx examples/http-carrier.ts`.
 * In your app, import from `sms-outbox` instead of `../src/index.js`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import express, { type RequestHandler } from 'express';
import {
  createSmsRouter,
  DeliveryError,
  outcome,
  staticKeys,
  type DeliveryAdapter,
  type DeliveryHandlers,
  type OutgoingPart,
  type Outcome,
  type SmsRouterOptions,
  type SubmitAck,
} from '../src/index.js';

/** How far a report's timestamp may be from our clock, seconds. */
const SIGNATURE_TOLERANCE_S = 300;

/** The carrier's report statuses, as outcomes. Any other status is read as `undelivered`, reason unknown. */
const STATUSES: Record<string, Outcome> = {
  delivered: outcome('delivered', 'delivered_to_terminal'),
  absent: outcome('undelivered', 'absent_subscriber'),
  failed: outcome('undelivered', 'delivery_impossible'),
  expired: outcome('expired', 'expired'),
  rejected: outcome('rejected', 'rejected'),
};

/** What the adapter needs from the carrier's account page. */
export interface HttpCarrierOptions {
  /** The carrier API's root, e.g. `https://carrier.example/v1`. */
  apiUrl: string;
  /** The API token, sent as `Authorization: Bearer <token>`. */
  token: string;
  /** The secret the carrier signs its delivery reports with. */
  secret: string;
}

/** `v1=<hex>` of a report, checked in constant time; `null` when it is right, else why not. */
export function signatureProblem(header: string | undefined, body: Buffer, secret: string, nowS: number): string | null {
  const fields = new Map((header ?? '').split(',').map((field) => field.trim().split('=', 2) as [string, string]));
  const t = Number(fields.get('t'));
  const given = Buffer.from(fields.get('v1') ?? '', 'hex');
  if (!Number.isInteger(t) || given.length === 0) return 'no signature';
  if (Math.abs(nowS - t) > SIGNATURE_TOLERANCE_S) return 'signature too old';
  const expected = createHmac('sha256', secret).update(`${t}.`).update(body).digest();
  return given.length === expected.length && timingSafeEqual(given, expected) ? null : 'bad signature';
}

/** A `DeliveryAdapter` over a carrier's HTTP API, with its delivery reports served by `routes()`. */
export class HttpCarrierDelivery implements DeliveryAdapter {
  #handlers: DeliveryHandlers | null = null;
  readonly #options: HttpCarrierOptions;

  constructor(options: HttpCarrierOptions) {
    this.#options = { ...options, apiUrl: options.apiUrl.replace(/\/+$/, '') };
  }

  /** Nothing to connect: each submit is a request of its own. */
  async start(handlers: DeliveryHandlers): Promise<void> {
    this.#handlers = handlers;
    handlers.connection?.({ bind: 'http', state: 'bound', reconnect: false });
  }

  /** POSTs one part; the carrier's `id` is the carrier id its report will name. */
  async submit(part: OutgoingPart): Promise<SubmitAck> {
    const res = await fetch(`${this.#options.apiUrl}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.#options.token}` },
      body: JSON.stringify({
        from: part.sender,
        to: part.recipient,
        text: part.partText,
        // The carrier joins the parts on the phone by these.
        part: { index: part.index + 1, count: part.count, ref: part.concatRef },
        ...(part.validitySeconds === undefined ? {} : { validity_seconds: part.validitySeconds }),
      }),
      signal: AbortSignal.timeout(10_000),
    });
    if (res.ok) {
      const { id } = (await res.json()) as { id?: unknown };
      if (typeof id === 'string' && id !== '') return { carrierId: id };
      throw new Error('the carrier accepted the part but answered no id');
    }
    const reason = await res.text();
    // A refusal of the message itself never succeeds on a retry; throttling and the
    // carrier's own failures do.
    if (res.status === 400 || res.status === 422) {
      throw new DeliveryError(`carrier refused the part (${res.status}): ${reason}`, { permanent: true, outcome: outcome('rejected', 'rejected') });
    }
    const retryAfterS = Number(res.headers.get('retry-after'));
    throw new DeliveryError(`carrier answered ${res.status}`, Number.isFinite(retryAfterS) && retryAfterS > 0 ? { retryAfterMs: retryAfterS * 1000 } : {});
  }

  /** `POST /receipts`: a signed delivery report, answered 200 only once it is stored. */
  routes(): RequestHandler {
    const router = express.Router();
    // The signature covers the exact bytes sent, so the body is read raw.
    router.post('/receipts', express.raw({ type: '*/*', limit: '16kb' }), (req, res, next) => {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const problem = signatureProblem(req.get('x-carrier-signature'), body, this.#options.secret, Math.floor(Date.now() / 1000));
      if (problem !== null) {
        res.status(401).json({ error: problem });
        return;
      }
      let report: { id?: unknown; status?: unknown };
      try {
        report = JSON.parse(body.toString('utf8')) as typeof report;
      } catch {
        res.status(400).json({ error: 'body is not JSON' });
        return;
      }
      if (typeof report.id !== 'string' || typeof report.status !== 'string') {
        res.status(400).json({ error: 'a report is { "id", "status" }' });
        return;
      }
      const handlers = this.#handlers;
      if (handlers === null) {
        // Not started yet, or closed: the carrier sends it again later.
        res.status(503).set('Retry-After', '5').json({ error: 'not ready' });
        return;
      }
      const known = STATUSES[report.status] ?? outcome('undelivered', 'unknown', `Carrier status ${report.status}`);
      // Only a stored receipt is acknowledged; a refusal (not matched yet, storage down,
      // closing) is answered so that the carrier retries it.
      handlers.receipt({ carrierId: report.id, outcome: known }).then(
        () => res.json({ ok: true }),
        () => res.status(503).set('Retry-After', '5').json({ error: 'not stored, send it again' }),
      ).catch(next);
    });
    return router;
  }

  /** No connection to close; later reports are refused, so the carrier keeps them. */
  async close(): Promise<void> {
    this.#handlers = null;
  }
}

/** Starts a gateway that sends through `carrier`; reports come to `<url>/api/outbox/carrier/receipts`. */
export async function startWithHttpCarrier(options: { port?: number; apiKey: string; carrier: HttpCarrierOptions; router?: Partial<SmsRouterOptions> }) {
  const sms = createSmsRouter({
    verifyKey: staticKeys([{ key: options.apiKey, id: 'acme', profiles: ['12345'] }]),
    delivery: new HttpCarrierDelivery(options.carrier),
    ...options.router,
  });
  const app = express();
  app.use(sms);
  const server = app.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  return {
    sms,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async stop() {
      await new Promise((resolve) => server.close(resolve));
      await sms.close();
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const running = await startWithHttpCarrier({
    port: 3000,
    apiKey: 'example-key',
    carrier: { apiUrl: process.env.CARRIER_URL ?? '', token: process.env.CARRIER_TOKEN ?? '', secret: process.env.CARRIER_SECRET ?? '' },
  });
  console.log(`listening on ${running.url}; give the carrier ${running.url}/api/outbox/carrier/receipts`);
}

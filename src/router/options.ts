/**
 * The router's public options (`SmsRouterOptions`) and the complete config they resolve to
 * (`SmsRouterConfig`, see config.ts): each section's type, defaults and resolver live in its
 * part's `options.ts`, and are gathered here.
 */
import type { KeyVerifier } from '../auth/principal.js';
import type { ProfileResolver } from '../auth/profiles.js';
import type { DeliveryAdapter } from '../delivery/contract.js';
import type { DlrConfig, DlrOptions } from '../dlr/options.js';
import type { BacklogOptions, CreditConfig, CreditOptions, IdempotencyOptions, LimitOptions, ServerErrorsOption, SpendCapsOptions } from '../http/options.js';
import type { SpendCapsConfig } from '../http/spend-caps.js';
import type { RateLimitConfig, RateLimitOptions } from '../http/rate-limit/options.js';
import type { MetricsConfig, MetricsOptions, SmsLogger } from '../observe/options.js';
import type { OpenApiConfig, OpenApiOptions } from '../openapi/options.js';
import type { InboundConfig, InboundOptions } from '../inbound/options.js';
import type { Storage } from '../storage/contract.js';
import type { RecordStore } from '../storage/record-store.js';
import type { RetentionOptions, WorkerOptions } from '../worker/options.js';

/** Options of {@link createSmsRouter}. Only `verifyKey` is required. */
export interface SmsRouterOptions {
  /** Maps an `X-API-Key` to its principal (see `staticKeys`). Required. */
  verifyKey: KeyVerifier;
  /** Finds a principal's profile by `profile_code`. Default: the principal's `profiles` list. */
  resolveProfile?: ProfileResolver;
  /**
   * Where messages live: a `RecordStore` (the primitives a storage offers; the library's
   * ledger makes every decision on top of it) or a full `Storage`. Default: the memory
   * storage (lost on restart; one process). Checked at construction: every required method
   * of its contract must be there; `null` is refused (leave the option out for the default).
   */
  storage?: Storage | RecordStore;
  /**
   * How messages reach the carrier. Default: a new `SimulatorDelivery` (a fake carrier).
   * Checked like `storage`.
   */
  delivery?: DeliveryAdapter;
  /**
   * Path prefix of the endpoints, relative to where the router is mounted: literal segments
   * of letters, digits and `. _ ~ -`, `''` for none. Default `/api/outbox`. Paths, this
   * prefix included, follow the host app's `case sensitive routing` setting.
   */
  basePath?: string;
  /**
   * Where the delivery adapter's own routes (`DeliveryAdapter.routes`, a carrier's delivery
   * reports over HTTP) are mounted, relative to where the router is mounted; the same
   * spelling as `basePath`. Default `<basePath>/carrier`. Unused when the adapter has none.
   */
  carrierPath?: string;
  /** Request bounds. */
  limits?: LimitOptions;
  /** Submission worker settings. */
  worker?: WorkerOptions;
  /**
   * Bounds on queued messages, per key (429) and in all (503), or `false` for none. Needs a
   * storage with `countQueued` (the bundled ones have it). Default: 100,000 per key, 1,000,000 in all.
   */
  backlog?: BacklogOptions | false;
  /** Delivery report (callback) settings: signing, retries, address policy; inbound webhooks share them. */
  dlr?: DlrOptions;
  /**
   * Mobile-originated messages (premium MO): who owns a short code (where its MO messages are
   * forwarded), the stop and start keywords, and the confirmation replies (docs/inbound.md).
   */
  inbound?: InboundOptions;
  /**
   * Purging of old terminal messages, or `false` to keep them all. Expired idempotency keys
   * are swept on its schedule either way (every hour, 1000 a batch, with `false`).
   */
  retention?: RetentionOptions | false;
  /**
   * The send endpoints' `Idempotency-Key`: `ttlMs`, how long a key replays its request's
   * answer (default 24 hours). Needs a storage with `findIdempotency` (the bundled ones have
   * it); without one, a request with the header is refused 400.
   */
  idempotency?: IdempotencyOptions;
  /**
   * What a request costs: its SMS units are taken from its principal's credit before its
   * messages are stored (402 `INSUFFICIENT_CREDIT` when short), and given back for messages
   * that end unsent. `{ ledger: 'storage' }` keeps the balances in the storage (topped up with
   * `router.credit.topUp`), `{ ledger: { charge, refund } }` asks the host's own; `refunds`
   * says which ended messages are refunded (see `CreditOptions`, docs/credit.md). Default: none,
   * requests cost nothing.
   */
  credit?: CreditOptions;
  /**
   * How the principals' spend caps (`dailyUnits`, `monthlyUnits`) count: `timeZone`, the IANA
   * zone whose midnight starts a new day's count (and whose first of the month a new month's).
   * Default `{ timeZone: 'UTC' }` (docs/keys.md#spend-caps).
   */
  spendCaps?: SpendCapsOptions;
  /**
   * Request and message limits per key, failed-auth limits per address, and their stores;
   * `false` turns them all off. Default: all on, counted in memory (see `RateLimitOptions`).
   */
  rateLimit?: RateLimitOptions | false;
  /**
   * Serves the OpenAPI document at `<basePath>/openapi.json` (no key needed); `false` turns it
   * off. `{ serverUrl, info }` serves it with that server (default `/`, the origin it was
   * fetched from) and `info` (title, version, description, contact). Default `true`.
   */
  openapi?: boolean | OpenApiOptions;
  /**
   * Who answers a request that failed unexpectedly (storage down, a bug): `'answer'`, the
   * router, `500 { "details": "500 server-error", "code": "SERVER_ERROR" }`; `'next'`, the
   * host, whose error middleware (and APM agent) gets the error through `next(error)`. The
   * `error` event hears of it either way, and the registry's refusals (4xx, 503) are always
   * the router's. Default `'answer'`.
   */
  serverErrors?: ServerErrorsOption;
  /** Logs every event on a pino-style logger (`info`, `warn`, `error`, `debug?`). Default: none, nothing is logged. */
  logger?: SmsLogger;
  /**
   * Prometheus metrics (`sms_outbox_*`) from the events: `{ client }` where `client` is the
   * host's prom-client module (`import * as client from 'prom-client'`), and optionally
   * `registry` (default: prom-client's default registry) and `profileLabel: false` (no
   * `profile` label, for gateways with thousands of profiles). Default: none, prom-client not needed.
   */
  metrics?: MetricsOptions;
  /**
   * OpenTelemetry spans, one trace per message (docs/operations.md, "Tracing"), recorded when
   * the optional peer `@opentelemetry/api` is installed and the host registered a tracer
   * provider; `false` turns them off. Default `true`.
   */
  tracing?: boolean;
  /** This instance's id, used as the lease owner. Default: a random UUID. */
  instanceId?: string;
  /** The clock, epoch ms. For tests. Default `Date.now`. */
  now?: () => number;
}

/** {@link SmsRouterOptions} with every default filled in. */
export interface SmsRouterConfig {
  verifyKey: KeyVerifier;
  resolveProfile: ProfileResolver;
  storage: Storage;
  delivery: DeliveryAdapter;
  basePath: string;
  carrierPath: string;
  limits: Required<LimitOptions>;
  worker: Required<WorkerOptions>;
  backlog: Required<BacklogOptions> | false;
  dlr: DlrConfig;
  inbound: InboundConfig;
  retention: Required<RetentionOptions> | false;
  idempotency: Required<IdempotencyOptions>;
  credit: CreditConfig | null;
  spendCaps: SpendCapsConfig;
  rateLimit: RateLimitConfig | false;
  openapi: OpenApiConfig | false;
  logger: SmsLogger | null;
  metrics: MetricsConfig | null;
  tracing: boolean;
  serverErrors: ServerErrorsOption;
  instanceId: string;
  now: () => number;
}

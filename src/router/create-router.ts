/**
 * `createSmsRouter`: wires the request path (authenticate -> parse -> validate -> resolve
 * profile -> store -> respond), the worker path (claim, or the request's hand-off ->
 * submit -> receipt -> callback) and the MO path (carrier -> inbound handler -> webhook)
 * into one Express middleware that also carries the typed events and `close()`. It builds
 * the parts, in the order they need each other, and connects them; it runs none of their work.
 */
import type { RequestHandler } from 'express';
import { authenticate, type GuardedRoute } from '../http/authenticate.js';
import { chain } from '../http/chain.js';
import { handleErrors } from '../http/handle-errors.js';
import { methodNotAllowed, methodsByPath } from '../http/method-not-allowed.js';
import { parseJsonBody } from '../http/parse-body.js';
import { createRateLimiters } from '../http/rate-limit/limiters.js';
import { sendHandler } from '../http/send.js';
import { previewHandler } from '../http/preview.js';
import { IdempotencyKeys } from '../http/idempotency.js';
import { CreditGate, type CreditAccounts } from '../http/credit.js';
import { SpendCapGate } from '../http/spend-caps.js';
import { BacklogGate } from '../http/backlog.js';
import { isTerminal } from '../lifecycle/states.js';
import { livePeriodKeys } from '../lifecycle/spend-periods.js';
import { statusByExternalId, statusByRef } from '../http/status.js';
import { cancelByExternalId, cancelByRef, type CancelDeps } from '../http/cancel.js';
import { listMessages, type ListingStorage } from '../http/list.js';
import { listCallbacks, replayCallbacks, type RecoveryStorage } from '../http/callbacks.js';
import { pullReports, type ReportLogStorage } from '../http/reports.js';
import { createValidators } from '../http/validate-request.js';
import { callbackUrlProblem } from '../dlr/address-guard.js';
import { CallbackDispatcher } from '../dlr/dispatcher.js';
import { callbackControls, replayed, type CallbackControls } from '../dlr/controls.js';
import { ReportFormats } from '../auth/report-formats.js';
import { SmsEventEmitter, emitterOf, type SmsEvents } from '../observe/events.js';
import { attachLogger, unheardErrorWriter } from '../observe/logging.js';
import { attachMetrics } from '../observe/metrics.js';
import { requestTimer } from '../observe/request-metrics.js';
import { createTracing } from '../observe/tracing.js';
import { serveOpenApi } from '../openapi/serve.js';
import { resolveOptions } from './config.js';
import { hostCaseRoutes } from './host-case-routes.js';
import type { SmsRouterOptions } from './options.js';
import type { CancelResult, Storage } from '../storage/contract.js';
import { settle } from '../util/settle.js';
import { ENDPOINTS, endpointAt, type OperationId } from '../endpoints.js';
import { routeTransitions } from '../outbox/transitions.js';
import { retentionSweep } from '../worker/retention.js';
import { receiptTimeoutFor, receiptTimeoutSweep } from '../worker/receipt-timeout.js';
import { timeSweep } from '../worker/time-sweep.js';
import { ReceiptHandler } from '../worker/receipt-handler.js';
import { queueSampler } from '../worker/queue-sampler.js';
import { SubmitWorker } from '../worker/submit-worker.js';
import { confirmations } from '../inbound/confirmations.js';
import { InboundHandler } from '../inbound/handler.js';
import { keywordMatcher } from '../inbound/keywords.js';
import { optOutGate, premiumOptOutCheck } from '../inbound/opt-out-gate.js';
import { optOutList, type OptOutList } from '../inbound/opt-out-list.js';
import { ownerTargets } from '../inbound/owners.js';
import { afterReady, storageReadiness } from './storage-ready.js';
import { operatorView, type OperatorView } from './operator-view.js';
import { subscriberEraser, type EraseRequest, type EraseSummary } from './erase.js';

/**
 * What {@link createSmsRouter} returns: Express middleware with typed events and a lifecycle.
 * The event methods return the router, so they chain
 * (`sms.on('message.accepted', bill).on('error', report)`); the emitter behind them stays
 * the router's own: a host cannot emit events or remove the router's own listeners.
 */
export interface SmsRouter extends RequestHandler {
  /**
   * Subscribes `listener` to `event` (see `SmsEvents`; the payload type follows the name).
   * A listener that throws is reported through `error`; the others still run. Returns the router.
   */
  on<E extends keyof SmsEvents>(event: E, listener: SmsEvents[E]): SmsRouter;
  /** Subscribes `listener` to the next `event` only. Returns the router. */
  once<E extends keyof SmsEvents>(event: E, listener: SmsEvents[E]): SmsRouter;
  /** Unsubscribes a listener passed to `on` or `once` (once per subscription). Returns the router. */
  off<E extends keyof SmsEvents>(event: E, listener: SmsEvents[E]): SmsRouter;
  /** Resolves when storage is ready and the carrier connection started; requests wait for it anyway. */
  ready(): Promise<void>;
  /**
   * The storage's credit balances (`topUp`, `balance`) with `credit: { ledger: 'storage' }`;
   * `null` otherwise.
   */
  readonly credit: CreditAccounts | null;
  /**
   * The opt-out list (`add`, `remove`, `has`, `list`), for hosts that import or show one;
   * its methods reject when the storage keeps no list (no inbound methods).
   */
  readonly optOuts: OptOutList;
  /** Report recovery (`replay`, and the paused callback URLs: `paused`, `resume`; docs/callbacks.md). */
  readonly callbacks: CallbackControls;
  /**
   * Stops claiming work, waits for submissions and callback attempts in flight, and closes
   * the carrier connection and the storage adapter (each closes only what it opened). The
   * messages the worker already holds (up to 4 times `worker.concurrency`) are submitted
   * first, so none waits out its lease after a graceful restart; the carrier is closed while
   * receipts can still be stored (the simulator reports every receipt it holds then);
   * receipts that arrived before their submission was recorded are applied; and the delivery
   * reports the sender holds but has not started are handed back to storage, claimable at
   * once by the next instance.
   * After it resolves no timer or socket of the router keeps the process alive.
   */
  close(): Promise<void>;
  /**
   * The router's storage, for reading (the operator console, `sms-outbox/dashboard`, reads
   * messages, parts, the queue count and inbound messages through it). Writes through it
   * bypass the router: no event is emitted, no report sent, no credit refunded.
   */
  readonly storage: Storage;
  /**
   * Cancels `refs` of `principalId` as `DELETE /messages/:ref` does (each one still
   * `scheduled`, or `queued` with nothing submitted), announcing each (`message.status`) and
   * sending its report; `null` when the storage has no `cancelMessages`.
   */
  readonly cancel: ((principalId: string, refs: readonly string[]) => Promise<CancelResult>) | null;
  /** What the operator console reads besides storage and events: carrier connections, principals, limits (operator-view.ts). */
  readonly operator: OperatorView;
  /**
   * Erases every stored number and text of one subscriber (a data-subject request,
   * docs/erase.md), in short steps, and announces it (`subscriber.erased`); resolves with the counts.
   */
  readonly erase: (request: EraseRequest) => Promise<EraseSummary>;
}

/**
 * Creates the SMS gateway router. Mount it on any Express app, under any prefix:
 *
 * ```ts
 * const sms = createSmsRouter({ verifyKey: staticKeys([{ key: 'secret', id: 'acme', profiles: ['12345'] }]) });
 * app.use(sms);
 * sms.on('message.accepted', ({ message }) => bill(message));
 * ```
 *
 * @throws TypeError at construction for a bad option.
 */
export function createSmsRouter(options: SmsRouterOptions): SmsRouter {
  const config = resolveOptions(options);
  // Errors nobody listens to go to stderr (rate-limited) rather than nowhere; a logger or
  // an `error` listener, even one added after this, takes them over.
  const events = new SmsEventEmitter({ unheardError: unheardErrorWriter({ now: config.now }) });
  const emit = emitterOf(events);
  const log = config.logger ? attachLogger(events, config.logger) : null;
  if (config.metrics) attachMetrics(events, config.metrics);
  const { storage, delivery, now } = config;
  const tracing = createTracing(config.tracing);
  // One ready() for every path to storage: the start below, and the host's own calls.
  const storageReady = storageReadiness(storage).ready;

  const reportFormats = new ReportFormats(config.verifyKey);
  const dispatcher = new CallbackDispatcher({
    storage, emit, config: config.dlr, owner: config.instanceId, now, reportFormat: reportFormats.of, tracing, failoverOf: reportFormats.failoverOf,
  });
  const onTransition = routeTransitions(emit, dispatcher);
  const worker = new SubmitWorker({
    storage, delivery, emit, config: config.worker, owner: config.instanceId, now, onTransition, optedOut: premiumOptOutCheck(storage), tracing,
  });
  const receipts = new ReceiptHandler({
    storage, emit, now, waitMs: config.worker.receiptWaitMs, onTransition, reports: dispatcher,
    submissionsRecorded: () => worker.submissionsRecorded(), tracing,
  });
  const inbound = new InboundHandler({
    storage, emit,
    target: ownerTargets(config.inbound.resolveOwner),
    keyword: keywordMatcher(config.inbound.stopKeywords, config.inbound.startKeywords),
    webhooks: dispatcher,
    confirm: confirmations({ texts: config.inbound.confirmation, storage, handOff: worker, emit, now }),
    error: (error) => emit('error', { error, source: 'worker' }),
    tracing,
  });
  const quickSendOptOuts = optOutGate({ storage, owner: config.instanceId, now, onTransition });
  const retention = retentionSweep(storage, config.retention, now, emit, (at) => livePeriodKeys(at, config.spendCaps.timeZone));
  const receiptTimeout = receiptTimeoutSweep(storage, receiptTimeoutFor(config.worker.receiptTimeoutMs, delivery), now, emit, onTransition);
  const timed = timeSweep({
    storage, intervalMs: config.worker.pollIntervalMs, now, emit, onTransition, wake: () => worker.wake(),
  });
  const queueDepth = queueSampler(storage, () => events.listenerCount('queue.depth') > 0, now, emit);

  // Storage first, then the carrier, then the background work; requests wait on it. A
  // failed start (the database down at boot) is forgotten, so the next request tries
  // again and the router recovers without a restart.
  let started: Promise<void> | null = null;
  let carrierStarted: Promise<void> | null = null;
  // Set once a start succeeded: requests then go on at once, without a promise turn each.
  let running = false;
  // Set by close(): a start that failed is not tried again after it, so nothing it would
  // open (the carrier connection, the worker, the sweeps) outlives close().
  let closing: Promise<void> | null = null;
  const start = (): Promise<void> => {
    if (closing !== null && started === null) return Promise.reject(new Error('sms-outbox: the router is closed'));
    // Which adapter failed, for the `error` event's source.
    let source: 'storage' | 'delivery' = 'storage';
    started ??= (async () => {
      const storageStart = performance.now();
      await storageReady();
      log?.storageReady(storage, performance.now() - storageStart);
      source = 'delivery';
      carrierStarted ??= delivery
        .start({
          receipt: (receipt) => receipts.receive(receipt),
          inbound: (message) => inbound.receive(message),
          error: (error) => emit('error', { error, source: 'delivery' }),
          // A failure is an `error` too, so that `error` listeners and stderr hear of it.
          connection: (change) => {
            emit('carrier.connection', change);
            if (change.state === 'unbound') {
              emit('error', { error: change.error, source: 'delivery', bind: change.bind, ...(change.route === undefined ? {} : { route: change.route }) });
            }
          },
          route: (change) => emit('carrier.route', change),
        })
        .catch((error: unknown) => {
          carrierStarted = null;
          throw error;
        });
      await carrierStarted;
      worker.start();
      dispatcher.start();
      retention?.start();
      receiptTimeout.start();
      timed?.start();
      queueDepth?.start();
      running = true;
    })().catch((error: unknown) => {
      started = null;
      emit('error', { error, source });
      throw error;
    });
    return started;
  };
  start().catch(() => undefined);

  // The backlog bounds need a storage that counts its queue; a message leaves the queue
  // when it is submitted, or ends before that.
  const backlog =
    config.backlog === false || storage.countQueued === undefined
      ? null
      : new BacklogGate(storage.countQueued.bind(storage), config.backlog, now);
  if (backlog !== null) {
    events.on('message.submitted', ({ message }) => backlog.left(message.principalId));
    events.on('message.status', ({ message, previousState }) => {
      if (previousState === 'queued' && isTerminal(message.state)) backlog.left(message.principalId);
    });
  }
  const validators = createValidators(config.limits, (url) => callbackUrlProblem(url, config.dlr.allowance));
  const limiters = createRateLimiters(config.rateLimit, emit);
  const idempotency =
    storage.findIdempotency === undefined
      ? null
      : new IdempotencyKeys({ find: storage.findIdempotency.bind(storage), ttlMs: config.idempotency.ttlMs, now, refund: limiters.refundRequest });
  const credit = config.credit === null ? null : new CreditGate({ config: config.credit, storage, emit, now });
  if (credit !== null) events.on('message.status', ({ message, previousState }) => credit.transition(message, previousState));
  const spendCaps = new SpendCapGate({ config: config.spendCaps, storage, emit });
  const send = (validate: typeof validators.quick): RequestHandler =>
    sendHandler({
      validate, resolveProfile: config.resolveProfile, storage, emit, now,
      handOff: worker, chargeMessages: limiters.chargeMessages, backlog, idempotency, credit, spendCaps, optOuts: quickSendOptOuts, tracing,
    });
  // The send's own stages, with nothing that stores, charges or counts against a budget.
  const preview = (validate: typeof validators.quick): RequestHandler =>
    previewHandler({ validate, resolveProfile: config.resolveProfile, storage, now, charges: credit !== null, optOuts: quickSendOptOuts, delivery });
  const body = parseJsonBody(config.limits.maxBodyBytes);
  // The key check notes the report format of principals a host's own verifier returns.
  const verifyKey = reportFormats.watching(config.verifyKey);
  // The admission stage of every endpoint, one Express layer: wait for the start (once it
  // succeeded, go on at once), then the rate limits around the key check.
  const admit = (route: GuardedRoute): RequestHandler => {
    const check = limiters.around(authenticate(verifyKey, route, now, emit));
    return (req, res, next) => {
      if (running) check(req, res, next);
      else settle(start(), () => check(req, res, next), next);
    };
  };

  // Each route's handler stages after admission, by the route's operation id; `null` for a
  // route this router does not serve (cancel without the storage's `cancelMessages`, the
  // list without its `listMessages`, the reports without `readReports`, report recovery without its methods), which
  // then answers neither its method nor 405 and falls through to the host.
  const cancelDeps: CancelDeps | null =
    storage.cancelMessages === undefined ? null : { storage: storage as CancelDeps['storage'], now, onTransition };
  const recovery = storage.listCallbacks !== undefined && storage.replayCallbacks !== undefined ? (storage as RecoveryStorage) : null;
  const handlers: Record<OperationId, RequestHandler[] | null> = {
    quickSend: [body, send(validators.quick)],
    premiumSend: [body, send(validators.premium)],
    quickPreview: [body, preview(validators.quick)],
    premiumPreview: [body, preview(validators.premium)],
    getDeliveryStatus: [statusByRef(storage)],
    findByExternalId: [statusByExternalId(storage)],
    listMessages: storage.listMessages === undefined ? null : [listMessages(storage as ListingStorage)],
    pullReports: storage.readReports === undefined ? null : [pullReports(storage as ReportLogStorage, reportFormats.of)],
    listCallbacks: recovery && [listCallbacks(recovery)],
    replayCallbacks: recovery && [body, replayCallbacks({ storage: recovery, now, onReplay: (principalId) => replayed(dispatcher, principalId, now()) })],
    cancelMessage: cancelDeps && [cancelByRef(cancelDeps)],
    cancelByExternalId: cancelDeps && [cancelByExternalId(cancelDeps)],
  };
  const served = ENDPOINTS.filter((route) => handlers[route.operationId] !== null);

  // The base path written into each route, rather than a second Router mounted at it, which
  // would add a routing level (URL parse, prefix trim, layer walk) to every request. Paths,
  // base path included, follow the host app's `case sensitive routing` (host-case-routes.ts).
  const base = config.basePath;
  const routes = hostCaseRoutes();
  // With metrics, each of the router's routes (its 405s too) is timed under its template.
  const timer = config.metrics ? requestTimer(config.metrics) : null;
  const measured = (path: string, handler: RequestHandler): RequestHandler => (timer === null ? handler : timer(path, handler));
  const documentPath = `${base}/openapi.json`;
  if (config.openapi) routes.get(documentPath, measured(documentPath, serveOpenApi(config.openapi, base)));
  // Rate limits sit around authentication: failed attempts per address before it, the
  // per-key request limit after it, so a refused client costs no body parsing.
  for (const route of served) {
    const method = route.method === 'GET' ? 'get' : route.method === 'POST' ? 'post' : 'delete';
    const path = `${base}${route.path}`;
    routes[method](path, measured(path, chain(admit(route), ...(handlers[route.operationId] ?? []))));
  }
  // The router's own paths answer every other method 405 with `Allow` (OPTIONS 204), in
  // its JSON; paths it does not own fall through to the host.
  if (config.openapi) routes.all(documentPath, measured(documentPath, methodNotAllowed(['GET'])));
  for (const [path, methods] of methodsByPath(served)) routes.all(`${base}${path}`, measured(`${base}${path}`, methodNotAllowed(methods)));
  // A carrier that calls back over HTTP: the adapter's own routes, after the API's, with
  // no key check (the adapter proves its carrier itself).
  const carrierRoutes = delivery.routes?.();
  if (carrierRoutes !== undefined) routes.use(config.carrierPath || '/', carrierRoutes);
  // Lower case: a case-insensitive host routes `/API/OUTBOX/CREATE` here too.
  routes.use(handleErrors(emit, (req) => endpointAt(req.path.slice(base.length).toLowerCase(), req.method), config.serverErrors));

  const router = ((req, res, next) => routes(req, res, next)) as SmsRouter;
  router.on = (event, listener) => {
    events.on(event, listener as never);
    return router;
  };
  router.once = (event, listener) => {
    events.once(event, listener as never);
    return router;
  };
  router.off = (event, listener) => {
    events.off(event, listener as never);
    return router;
  };
  router.ready = start;
  // The host may call these before the first request: they wait for the storage's ready().
  (router as { optOuts: OptOutList }).optOuts = afterReady(storageReady, optOutList(storage, emit, now));
  const accounts = credit?.accounts ?? null;
  Object.defineProperty(router, 'credit', { value: accounts === null ? null : afterReady(storageReady, accounts), enumerable: true });
  Object.defineProperty(router, 'storage', { value: storage, enumerable: true });
  Object.defineProperty(router, 'callbacks', { value: callbackControls({ storage, dispatcher, now, storageReady }), enumerable: true });
  const cancel =
    cancelDeps === null
      ? null
      : async (principalId: string, refs: readonly string[]): Promise<CancelResult> => {
          await storageReady();
          const result = await cancelDeps.storage.cancelMessages(principalId, refs, now());
          for (const transition of result.cancelled) onTransition(transition);
          return result;
        };
  Object.defineProperty(router, 'cancel', { value: cancel, enumerable: true });
  Object.defineProperty(router, 'operator', { value: operatorView(config), enumerable: true });
  Object.defineProperty(router, 'erase', { value: subscriberEraser({ storage, ready: storageReady, emit, now, onTransition }), enumerable: true });
  router.close = () => {
    closing ??= (async () => {
      await started?.catch(() => undefined);
      await retention?.close();
      await receiptTimeout.close();
      await timed?.close();
      await queueDepth?.close();
      await worker.close();
      // Parts of long MO messages held in memory are refused while the carrier can still hear it.
      inbound.close();
      // The carrier before the receipt handler: receipts it reports while closing (the
      // simulator reports every one it still holds) are stored, and their reports reach
      // the dispatcher, which hands back to storage what it has not sent.
      await delivery.close();
      await receipts.close();
      await dispatcher.close();
      await storage.close?.();
      await limiters.close();
    })();
    return closing;
  };
  return router;
}

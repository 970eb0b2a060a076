/**
 * The `metrics` option: turns the router's events into Prometheus counters and histograms
 * on the host's prom-client registry, so a host gets a gateway dashboard without writing
 * listeners. prom-client stays the host's: this file never imports it, not even its types.
 */
import type { ErrorSource, SmsEventEmitter, SmsEventName, SmsEvents } from './events.js';
import { isTerminal, type StatusReason, type TerminalState } from '../lifecycle/states.js';
import { ERRORS, OptionError } from '../errors.js';
import { VERSION } from '../version.js';
import { ENDPOINT_NAMES, SEND_ENDPOINT_NAMES } from '../endpoints.js';
import type { Endpoint } from '../storage/contract.js';
import { countryLabel } from './country-label.js';
import type { MetricsConfig, PromCounter, PromGauge, PromHistogram, PromMetricConfig, PromRegistry } from './options.js';

/** Upper bounds of the queue-wait buckets, seconds: from a carrier that keeps up to a backlog of an hour. */
const QUEUE_WAIT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/**
 * Upper bounds of the submitted-to-final buckets, seconds: a handset receipt comes in
 * seconds, an absent subscriber's after hours, and carriers keep trying for up to 48 h.
 */
const SUBMIT_TO_FINAL_BUCKETS = [1, 2.5, 5, 10, 30, 60, 300, 900, 1800, 3600, 7200, 14_400, 43_200, 86_400, 172_800];

/**
 * How many submitted messages the submitted-to-final histogram remembers the submit time
 * of; past it the oldest are forgotten, and not observed when they end.
 */
const SUBMITTED_TRACKED_MAX = 100_000;

/** The endpoints a message is accepted on (typed as the messages' own `endpoint`, so the two agree). */
const SEND_ENDPOINTS: readonly Endpoint[] = SEND_ENDPOINT_NAMES;

/** The endpoints a request can be refused on (the `none` of a path outside them appears when used). */
const REQUEST_ENDPOINTS = ENDPOINT_NAMES;

/** Every 4xx status of the error registry: their series exist from the start (a 503 appears with its first refusal). */
const REFUSAL_STATUSES = [...new Set(Object.values(ERRORS).map((entry) => entry.status))].filter((status) => status < 500);

/**
 * The finished series that exist before the first message ends: each terminal state with
 * its usual reason. The other reasons appear with their first message; every combination
 * would be forty series per endpoint, most of which never move.
 */
const FINISHED_SERIES: readonly [TerminalState, StatusReason][] = [
  ['delivered', 'delivered_to_terminal'],
  ['undelivered', 'absent_subscriber'],
  ['expired', 'expired'],
  ['rejected', 'rejected'],
  ['failed', 'unknown'],
  ['expired', 'validity_period_elapsed'],
  ['cancelled', 'cancelled'],
];

/** Every `error` event source; written as a record so that a new source fails to compile until listed. */
const ERROR_SOURCES = Object.keys({
  request: true, worker: true, receipt: true, dlr: true, listener: true, delivery: true, storage: true, credit: true,
} satisfies Record<ErrorSource, true>);

/** Upper bounds of the delivery-report duration buckets, seconds: up to the default 15 s timeout and past it. */
const DLR_DURATION_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30];

/**
 * Registers a metric, or returns the one of that name already in the registry: a second
 * router on the same registry (or one rebuilt in tests) then adds to the same series
 * instead of prom-client throwing "already registered".
 */
export function metric<M extends PromCounter | PromHistogram | PromGauge>(
  registry: PromRegistry,
  config: PromMetricConfig,
  kind: new (config: PromMetricConfig) => M,
): M {
  const existing = registry.getSingleMetric(config.name);
  if (existing === undefined || existing === null) {
    const made = new kind(config);
    registry.registerMetric(made);
    return made;
  }
  if (!(existing instanceof kind)) {
    throw new OptionError(`metrics: \`${config.name}\` is already registered as another kind of metric`);
  }
  // Two routers on one registry with other labels (one with `profileLabel: false`) would
  // fail at their first count; tell it at construction instead.
  const labels = (existing as { labelNames?: unknown }).labelNames;
  if (Array.isArray(labels) && labels.join() !== config.labelNames.join()) {
    throw new OptionError(
      `metrics: \`${config.name}\` is already registered with the labels [${labels.join(', ')}], not [${config.labelNames.join(', ')}]; give routers that differ in \`profileLabel\` their own registry`,
    );
  }
  return existing;
}

/**
 * Subscribes Prometheus metrics to `events`. Every metric is named `sms_outbox_*` and
 * derived from the events alone (no storage queries, nothing on the request path beyond
 * a counter increment). Labels have bounded values: endpoint, profile code (unless
 * `profileLabel` is off), recipient country (an ISO code or `unknown`), state, reason,
 * result, HTTP status, error source, carrier bind; never a ref, number or URL. Counters
 * whose label values are known in advance start at 0 for them, so a rate or an alert works
 * from the first occurrence. Returns a function that unsubscribes (the metrics stay
 * registered).
 */
export function attachMetrics(events: SmsEventEmitter, config: MetricsConfig): () => void {
  const { client, registry, profileLabel } = config;
  const counter = (name: string, help: string, labelNames: readonly string[] = []) =>
    metric(registry, { name: `sms_outbox_${name}`, help, labelNames, registers: [] }, client.Counter);
  const histogram = (name: string, help: string, labelNames: readonly string[], buckets: number[]) =>
    metric(registry, { name: `sms_outbox_${name}`, help, labelNames, registers: [], buckets }, client.Histogram);

  const rejected = counter('requests_rejected_total', 'Requests refused (a 4xx, or the 503 of a full backlog), by endpoint and status.', ['endpoint', 'status']);
  const byProfile = profileLabel ? ' and profile' : '';
  const acceptedLabels = profileLabel ? ['endpoint', 'profile'] : ['endpoint'];
  const accepted = counter('messages_accepted_total', `Messages stored and acknowledged, by endpoint${byProfile}.`, acceptedLabels);
  const units = counter('sms_units_accepted_total', `SMS units (parts) of the accepted messages, by endpoint${byProfile}.`, acceptedLabels);
  const submitted = counter('messages_submitted_total', 'Messages whose every part the carrier accepted, by endpoint.', ['endpoint']);
  const retries = counter('submission_retries_total', 'Submissions that failed with a retryable carrier error and will be tried again.');
  const finished = counter('messages_finished_total', 'Messages that reached a terminal state, by endpoint, state and reason.', ['endpoint', 'state', 'reason']);
  const byCountry = counter(
    'country_messages_total',
    "Messages by the recipient's country (ISO 3166 alpha-2, else unknown) and stage: accepted, submitted, or the terminal state.",
    ['country', 'stage'],
  );
  const inbound = counter('inbound_messages_total', 'Mobile-originated messages received.');
  const dlrAttempts = counter('dlr_attempts_total', 'Delivery report attempts, by result: sent (2xx), retrying, failed (given up).', ['result']);
  const dlrDuration = histogram(
    'dlr_attempt_duration_seconds',
    'How long each delivery report attempt took, by result.',
    ['result'],
    DLR_DURATION_BUCKETS,
  );
  const inboundAttempts = counter('inbound_webhook_attempts_total', 'Inbound (MO) webhook attempts, by result: sent (2xx), retrying, failed (given up).', ['result']);
  const inboundDuration = histogram(
    'inbound_webhook_attempt_duration_seconds',
    'How long each inbound (MO) webhook attempt took, by result.',
    ['result'],
    DLR_DURATION_BUCKETS,
  );
  const optChanges = counter('opt_out_changes_total', 'Changes of the opt-out list, by change (opted_out, opted_in) and source (keyword, api).', ['change', 'source']);
  const gauge = (name: string, help: string, labelNames: readonly string[] = []) =>
    metric(registry, { name: `sms_outbox_${name}`, help, labelNames, registers: [] }, client.Gauge);
  const endpointsPaused = gauge('callback_endpoints_paused', 'Callback URLs paused on this instance for failing for dlr.pauseAfterMs (docs/callbacks.md).');
  const endpointPauses = counter('callback_endpoint_pauses_total', 'Times a callback URL was paused for failing for dlr.pauseAfterMs.');
  const queueDepth = gauge('queue_depth', 'Messages queued (accepted, not yet submitted), by class; sampled every 5 s.', ['class']);
  const oldestAge = gauge('queue_oldest_age_seconds', 'Age of the oldest queued message (0 when none); sampled every 5 s.');
  const acceptToSubmit = histogram(
    'accept_to_submit_seconds',
    'From acceptance to the carrier accepting every part: the wait in the queue, by class.',
    ['class'],
    QUEUE_WAIT_BUCKETS,
  );
  const submitToFinal = histogram(
    'submit_to_final_seconds',
    'From the carrier accepting every part to the final state (the delivery receipt), by class. ' +
      'Not observed: a message submitted by another instance, or one whose submit time was dropped ' +
      `(this process remembers at most ${SUBMITTED_TRACKED_MAX}, the oldest dropped first).`,
    ['class'],
    SUBMIT_TO_FINAL_BUCKETS,
  );
  const errors = counter('errors_total', 'Unexpected errors (500s, storage, carrier, listeners), by source.', ['source']);
  const bound = gauge('carrier_bound', 'Whether each carrier connection (SMPP bind) is up: 1 bound, 0 down; by route (when routed) and bind.', ['route', 'bind']);
  const reconnects = counter('carrier_reconnects_total', 'Carrier connections (SMPP binds) bound again after being lost, by route (when routed) and bind.', ['route', 'bind']);
  const routeUp = gauge('route_up', 'Whether each route of a RoutedDelivery takes its own messages: 1 up, 0 down (they go to its fallback).', ['route']);
  const routeDowns = counter('route_down_total', 'Times each route went down, by why: unbound (no bind that submits is up) or throttled.', ['route', 'reason']);
  gauge('build_info', 'The sms-outbox version, as a label; always 1.', ['version']).set({ version: VERSION }, 1);

  // Series whose label values are known start at 0 (`inc` by 0 creates one).
  for (const endpoint of REQUEST_ENDPOINTS) {
    for (const status of REFUSAL_STATUSES) rejected.inc({ endpoint, status: String(status) }, 0);
  }
  for (const endpoint of SEND_ENDPOINTS) {
    // A profile's series starts with its first message: the codes are the host's to know.
    if (!profileLabel) {
      accepted.inc({ endpoint }, 0);
      units.inc({ endpoint }, 0);
    }
    submitted.inc({ endpoint }, 0);
    for (const [state, reason] of FINISHED_SERIES) finished.inc({ endpoint, state, reason }, 0);
  }
  for (const result of ['sent', 'retrying', 'failed']) {
    dlrAttempts.inc({ result }, 0);
    inboundAttempts.inc({ result }, 0);
  }
  for (const change of ['opted_out', 'opted_in']) for (const source of ['keyword', 'api']) optChanges.inc({ change, source }, 0);
  for (const source of ERROR_SOURCES) errors.inc({ source }, 0);
  endpointPauses.inc({}, 0);
  endpointsPaused.set({}, 0);

  const detach: (() => void)[] = [];
  const on = <K extends SmsEventName>(name: K, listener: SmsEvents[K]): void => {
    events.on(name, listener as never);
    detach.push(() => events.off(name, listener as never));
  };
  const dlr = (result: string) => (event: { durationMs: number }) => {
    dlrAttempts.inc({ result });
    dlrDuration.observe({ result }, event.durationMs / 1000);
  };

  on('request.rejected', (e) => rejected.inc({ endpoint: e.endpoint ?? 'none', status: String(e.status) }));
  on('message.accepted', ({ message: m }) => {
    const labels: Record<string, string> = profileLabel ? { endpoint: m.endpoint, profile: m.profileCode } : { endpoint: m.endpoint };
    accepted.inc(labels);
    units.inc(labels, m.smsCount);
    byCountry.inc({ country: countryLabel(m.country), stage: 'accepted' });
  });
  // When each message awaiting its final state was submitted: the record at the final
  // transition no longer says. Bounded, oldest forgotten first (a Map keeps insertion
  // order); a message submitted by another instance, or forgotten, is not observed.
  const submittedAt = new Map<string, number>();
  on('message.submitted', ({ message: m }) => {
    submitted.inc({ endpoint: m.endpoint });
    byCountry.inc({ country: countryLabel(m.country), stage: 'submitted' });
    acceptToSubmit.observe({ class: m.priority }, Math.max(0, m.updatedAt - m.createdAt) / 1000);
    submittedAt.delete(m.ref);
    submittedAt.set(m.ref, m.updatedAt);
    if (submittedAt.size > SUBMITTED_TRACKED_MAX) {
      const oldest = submittedAt.keys().next();
      if (oldest.done !== true) submittedAt.delete(oldest.value);
    }
  });
  on('queue.depth', (q) => {
    queueDepth.set({ class: 'transactional' }, q.transactional);
    queueDepth.set({ class: 'bulk' }, q.bulk);
    oldestAge.set({}, q.oldestAcceptedAt === null ? 0 : Math.max(0, q.at - q.oldestAcceptedAt) / 1000);
  });
  on('message.retrying', () => retries.inc({}));
  on('message.status', ({ message: m, previousState }) => {
    if (!isTerminal(m.state)) return;
    finished.inc({ endpoint: m.endpoint, state: m.state, reason: m.statusReason ?? 'unknown' });
    byCountry.inc({ country: countryLabel(m.country), stage: m.state });
    const sent = submittedAt.get(m.ref);
    if (sent === undefined) return;
    submittedAt.delete(m.ref);
    if (previousState === 'submitted') submitToFinal.observe({ class: m.priority }, Math.max(0, m.updatedAt - sent) / 1000);
  });
  on('message.inbound', () => inbound.inc({}));
  on('dlr.sent', dlr('sent'));
  on('dlr.retrying', dlr('retrying'));
  on('dlr.failed', dlr('failed'));
  // The paused URLs of this router: a URL is paused once until resumed (endpoint-health.ts).
  let paused = 0;
  on('callback.endpoint_paused', () => {
    endpointPauses.inc({});
    endpointsPaused.set({}, ++paused);
  });
  on('callback.endpoint_resumed', () => endpointsPaused.set({}, (paused = Math.max(0, paused - 1))));
  const inboundHook = (result: string) => (event: { durationMs: number }) => {
    inboundAttempts.inc({ result });
    inboundDuration.observe({ result }, event.durationMs / 1000);
  };
  on('inbound.sent', inboundHook('sent'));
  on('inbound.retrying', inboundHook('retrying'));
  on('inbound.failed', inboundHook('failed'));
  on('subscriber.opted_out', (e) => optChanges.inc({ change: 'opted_out', source: e.source }));
  on('subscriber.opted_in', (e) => optChanges.inc({ change: 'opted_in', source: e.source }));
  on('error', (e) => errors.inc({ source: e.source }));
  on('carrier.connection', (c) => {
    // Unrouted, the series keep the one label they always had.
    const labels: Record<string, string> = c.route === undefined ? { bind: c.bind } : { route: c.route, bind: c.bind };
    bound.set(labels, c.state === 'bound' ? 1 : 0);
    reconnects.inc(labels, c.state === 'bound' && c.reconnect ? 1 : 0);
  });
  on('carrier.route', (r) => {
    routeUp.set({ route: r.route }, r.state === 'up' ? 1 : 0);
    for (const reason of ['unbound', 'throttled']) routeDowns.inc({ route: r.route, reason }, r.reason === reason ? 1 : 0);
  });

  return () => {
    for (const off of detach.splice(0)) off();
    submittedAt.clear();
  };
}

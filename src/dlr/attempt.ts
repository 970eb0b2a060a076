/**
 * One webhook attempt, a delivery report's or an inbound message's: check the address, sign,
 * POST, record the result in storage and tell the host through a `dlr.*` (or `inbound.*`)
 * event.
 */
import type { Emit } from '../observe/events.js';
import { SPAN_NAMES, type MessageTracing, type TracedSpan } from '../observe/tracing.js';
import type { CallbackAttempt, CallbackState, Storage } from '../storage/contract.js';
import { callbackUrlProblem } from './address-guard.js';
import type { DlrConfig } from './options.js';
import type { ReportFormatOf } from './payload.js';
import type { CallbackSender, PostResult } from './post.js';
import { nextAttemptDelay, verdictOf } from './schedule.js';
import { signWebhook } from './sign.js';
import type { EndpointHealth } from './endpoint-health.js';
import { isInbound, webhookBody, webhookRef, webhookSecret, webhookUrl, type Webhook } from './webhook.js';

/** What an attempt needs. */
export interface ReportAttemptDeps {
  storage: Storage;
  emit: Emit;
  config: DlrConfig;
  sender: CallbackSender;
  /** The clock, epoch ms; also gives the `webhook-timestamp`. */
  now: () => number;
  /** Random numbers in [0, 1) for the retry schedule's jitter. */
  random: () => number;
  /** The format of a principal's delivery reports. */
  reportFormat: ReportFormatOf;
  /** OpenTelemetry: a span per webhook attempt (report or inbound), in its message's trace; absent or `null`: none. */
  tracing?: MessageTracing | null;
  /** The failover URL of a principal's reports (`Principal.callbackFailoverUrl`), or `null`; absent: none has one. */
  failoverOf?: (principalId: string) => string | null;
  /** Which URLs are paused (endpoint-health.ts); absent: none ever is. */
  health?: EndpointHealth;
}

/** The result of an attempt that was refused before anything was sent. */
function unsent(error: string): PostResult {
  return { statusCode: null, error, durationMs: 0, retryAfterMs: null };
}

/** A report's state once `attempt` (the n-th) was recorded as `record`: what storage then holds. */
function afterAttempt(attempt: number, record: CallbackAttempt): CallbackState {
  return {
    state: record.result === 'retry' ? 'pending' : record.result,
    attempts: attempt,
    lastStatusCode: record.statusCode,
    lastError: record.error,
    nextAttemptAt: record.nextAttemptAt,
  };
}

/** Returns the function that makes one attempt of a due webhook. The attempt never rejects. */
export function reportAttempt(deps: ReportAttemptDeps): (due: Webhook) => Promise<void> {
  const { storage, emit, config, sender, now, random, reportFormat } = deps;
  const tracing = deps.tracing ?? null;
  const failoverOf = deps.failoverOf ?? (() => null);
  const health = deps.health;

  /**
   * Signs and posts one report. `hopeless` marks a failure no retry can mend: a URL wrong
   * in itself (scheme, credentials, internal literal IP) or a secret that cannot sign.
   */
  const post = async (due: Webhook, url: string, span: TracedSpan | null): Promise<{ result: PostResult; hopeless: boolean; paused?: true }> => {
    if (health?.isPaused(url) === true) return { result: unsent('paused: the callback URL has failed for dlr.pauseAfterMs'), hopeless: true, paused: true };
    const urlProblem = callbackUrlProblem(url, config.allowance);
    if (urlProblem !== null) return { result: unsent(`blocked: callback URL ${urlProblem}`), hopeless: true };
    const body = webhookBody(due, reportFormat);
    const secret = webhookSecret(due) ?? config.secret;
    let headers: Record<string, string> | undefined;
    if (secret !== null) {
      const timestamp = Math.floor(now() / 1000);
      let signature: string;
      try {
        signature = signWebhook(secret, due.uid, timestamp, body);
      } catch (error) {
        emit('error', { error, source: 'dlr', ref: webhookRef(due) });
        return { result: unsent(`cannot sign: ${(error as Error).message}`), hopeless: true };
      }
      headers = { 'webhook-id': due.uid, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
    }
    // The receiver continues the message's trace: under this attempt's span, or the stored one
    // (the request's, an inbound message's arrival) when this instance records no spans.
    // Beside the signature, which covers the body only.
    const traceparent = span?.traceparent ?? storedTrace(due);
    if (traceparent != null) (headers ??= {}).traceparent = traceparent;
    const result = await sender.post({ url, body, headers, timeoutMs: config.timeoutMs, userAgent: config.userAgent });
    return { result, hopeless: false };
  };

  return async (due) => {
    const { uid } = due;
    const failoverUrl = isInbound(due) ? null : failoverOf(due.message.principalId);
    const onFailover = failoverUrl !== null && !isInbound(due) && due.message.callback?.failover === true;
    const url = onFailover ? failoverUrl : (webhookUrl(due) ?? '');
    const attempt = due.attempts + 1;
    const span = tracing === null ? null : attemptSpan(tracing, due, attempt);
    try {
      const { result, hopeless, paused } = await post(due, url, span).catch((error: unknown) => {
        span?.end(error);
        throw error;
      });
      if (span !== null) {
        if (result.statusCode !== null) span.set({ 'http.response.status_code': result.statusCode });
        span.end(result.error ?? (verdictOf(result.statusCode) === 'delivered' ? undefined : `HTTP ${result.statusCode}`));
      }
      const at = now();
      const verdict = verdictOf(result.statusCode);
      if (paused !== true) health?.attempted(url, (isInbound(due) ? due.inbound.principalId : due.message.principalId) ?? '', verdict === 'delivered', at);
      const delay =
        verdict === 'retry' && !hopeless ? nextAttemptDelay(attempt - scheduledAfter(due), config.schedule, result.retryAfterMs, random) : null;
      const error = result.error ?? (verdict === 'delivered' ? null : `HTTP ${result.statusCode}`);
      let record: CallbackAttempt =
        verdict === 'delivered'
          ? { result: 'delivered', statusCode: result.statusCode, error: null, nextAttemptAt: null, now: at }
          : delay === null
            ? { result: 'failed', statusCode: result.statusCode, error, nextAttemptAt: null, now: at }
            : { result: 'retry', statusCode: result.statusCode, error, nextAttemptAt: at + delay, now: at };
      // The main URL gave up: the failover URL takes the report, on the whole schedule.
      if (record.result === 'failed' && failoverUrl !== null && !onFailover && failoverUrl !== url) {
        record = { result: 'retry', statusCode: result.statusCode, error, nextAttemptAt: at, now: at, failover: true };
      }
      const common = { uid, url, attempt, statusCode: result.statusCode, durationMs: result.durationMs };
      // The record was read when the webhook was claimed: the event shows it as this attempt left it.
      if (isInbound(due)) {
        await storage.recordInboundAttempt!(uid, record);
        const event = { ...common, inbound: { ...due.inbound, callback: afterAttempt(attempt, record) } };
        if (record.result === 'delivered') emit('inbound.sent', event);
        else if (record.result === 'failed') emit('inbound.failed', { ...event, error });
        else emit('inbound.retrying', { ...event, error, nextAttemptAt: record.nextAttemptAt! });
        return;
      }
      await storage.recordCallbackAttempt(uid, record);
      const event = { ...common, message: { ...due.message, callback: afterAttempt(attempt, record) } };
      if (record.result === 'delivered') emit('dlr.sent', event);
      else if (record.result === 'failed') emit('dlr.failed', { ...event, error });
      else emit('dlr.retrying', { ...event, error, nextAttemptAt: record.nextAttemptAt! });
    } catch (error) {
      // Not recorded: the lease ends and the webhook is tried again (at-least-once).
      emit('error', { error, source: 'dlr', ref: webhookRef(due) });
    }
  };
}

/** The attempts the retry schedule of `due` starts after: those made before it last started again, at a replay or the failover (`CallbackState.restartedAfter`). */
function scheduledAfter(due: Webhook): number {
  return (isInbound(due) ? due.inbound.callback?.restartedAfter : due.message.callback?.restartedAfter) ?? 0;
}

/** The `traceparent` stored with the message `due` is about, if it was traced. */
function storedTrace(due: Webhook): string | null | undefined {
  return isInbound(due) ? due.inbound.traceparent : due.message.traceparent;
}

/**
 * The span of attempt `attempt` of webhook `due`, a child of its message's stored span (a
 * report's request, an inbound message's arrival); `null` when not traced.
 */
function attemptSpan(tracing: MessageTracing, due: Webhook, attempt: number): TracedSpan | null {
  if (isInbound(due)) {
    return tracing.child(SPAN_NAMES.inbound, due.inbound.traceparent, { 'sms.inbound_ref': due.inbound.ref, 'sms.inbound.attempt': attempt }, 'CLIENT');
  }
  return tracing.child(SPAN_NAMES.report, due.message.traceparent, { 'sms.message_ref': due.message.ref, 'sms.report.attempt': attempt }, 'CLIENT');
}

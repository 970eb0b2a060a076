/**
 * The send endpoints' last stages: replay the answer kept under the request's
 * `Idempotency-Key` (idempotency.ts), or resolve the profile, charge the request's credit
 * (credit.ts), store its messages (with the answer, under its key, and the charge) in one
 * atomic step, answer with one item per message, and announce them.
 */
import type { Request, RequestHandler, Response } from 'express';
import { isPromiseLike } from '../util/settle.js';
import { SmsError } from '../errors.js';
import { defaultSender, type Profile, type ProfileResolver } from '../auth/profiles.js';
import type { Emit } from '../observe/events.js';
import { requestIdOf } from '../observe/request-id.js';
import { SPAN_NAMES, type MessageTracing, type TracedSpan } from '../observe/tracing.js';
import type { NewMessage, Storage } from '../storage/contract.js';
import type { MessageHandOff } from '../outbox/hand-off.js';
import { principalOf } from './authenticate.js';
import type { Principal } from '../auth/principal.js';
import { newMessageRef } from '../outbox/message-ref.js';
import { retentionOf } from '../auth/retain-text-option.js';
import { sendJsonText } from './respond.js';
import type { RequestValidator, SendRequest } from './validate-request.js';
import type { ChargeMessages, MessageCharge } from './message-budget.js';
import type { BacklogGate } from './backlog.js';
import { idempotencyKeyOf, type IdempotencyKeys, type KeyClaim } from './idempotency.js';
import { requestTimes, timesOf, type RequestTimes } from './send-times.js';
import type { CreditGate } from './credit.js';
import type { SpendCapGate } from './spend-caps.js';
import type { OptOutGate } from '../inbound/opt-out-gate.js';
import { countSms, smartEncode } from '../sms/segments.js';
import { checkRecipients, type CheckedRecipient } from './recipients.js';

/** What a send handler needs. */
export interface SendHandlerDeps {
  validate: RequestValidator;
  resolveProfile: ProfileResolver;
  storage: Storage;
  emit: Emit;
  now: () => number;
  /** Where stored messages go next: this instance's worker, leased to it when it has room. */
  handOff: MessageHandOff;
  /**
   * Takes the request's messages from the caller's budget, or throws (429/422): nothing is
   * stored then. What it took is given back if the request then stores nothing.
   */
  chargeMessages: ChargeMessages;
  /** Refuses a request that would pass a backlog bound (429/503), before it is charged; `null`: no bounds. */
  backlog: BacklogGate | null;
  /** The `Idempotency-Key`s; `null` when the storage cannot keep them (the header is then refused). */
  idempotency: IdempotencyKeys | null;
  /** The `credit` option's charges and refunds; `null`: requests cost nothing. */
  credit: CreditGate | null;
  /** The principals' spend caps (`dailyUnits`, `monthlyUnits`); absent or `null`: none counted. */
  spendCaps?: SpendCapGate | null;
  /** The opt-out list, for quick-send profiles that honour it; absent or `null`: not checked here. */
  optOuts?: OptOutGate | null;
  /** OpenTelemetry spans of the request and its insert; absent or `null`: none. */
  tracing?: MessageTracing | null;
}

const invalidProfile = new SmsError('INVALID_PROFILE');

/** The sender a request's messages go out from: its `from` when it is one of the profile's senders (else a 422), or the profile's default. */
export function senderFor(profile: Profile, from: string | null): string {
  if (from === null) return defaultSender(profile);
  const senders = profile.senders ?? [profile.code];
  if (!senders.includes(from)) throw new SmsError('VALIDATION_FAILED', 'from: is not a sender of this profile');
  return from;
}

/**
 * The messages a request stores, one per item, in item order: what the send stores and
 * what its preview describes. Smart encoding (the profile's) is applied here.
 */
export function toMessages(request: SendRequest, recipients: readonly CheckedRecipient[], principal: Principal, profile: Profile, sender: string, now: number, requested: RequestTimes): NewMessage[] {
  const principalId = principal.id;
  const secret = principal.callbackSecret ?? null;
  // Pull only (the profile's or the principal's choice): no callback is ever attempted; the
  // reports are read from GET {base}/reports, as every message's are.
  const callbackUrl = profile.reportDelivery === 'pull' || principal.reportDelivery === 'pull' ? null : request.callbackUrl;
  const priority = profile.priority ?? 'bulk';
  const weight = principal.weight ?? 1;
  const smart = profile.smartEncoding === true;
  const retainText = retentionOf(profile, principal);
  return request.items.map((item, i) => {
    const ref = newMessageRef();
    const to = recipients[i]!;
    // A GSM-7 text has nothing to replace; the stored text and its count are what is sent.
    const text = smart && item.count.encoding === 'UCS-2' ? smartEncode(item.text) : item.text;
    const count = text === item.text ? item.count : countSms(text);
    const times = timesOf(requested, i);
    const message: NewMessage = {
      ref,
      principalId,
      endpoint: request.endpoint,
      profileCode: request.profileCode,
      sender,
      recipient: to.recipient,
      recipientAsSent: to.asSent,
      country: to.country,
      numberType: to.numberType,
      text,
      messageType: item.messageType,
      reqType: item.reqType,
      // A missing reference is generated: the message's own ref is as unique as it gets.
      externalId: item.reference ?? ref,
      recipientField: request.recipientField,
      referenceField: request.referenceField,
      smsCount: count.smsCount,
      encoding: count.encoding,
      callbackUrl,
      callbackSecret: callbackUrl === null ? null : secret,
      createdAt: now,
      priority,
      weight,
      sendAt: times.sendAt,
      validUntil: times.validUntil,
    };
    // Only when set: a message without them has no such keys, so records compare as stored.
    if (times.holdReason !== null) message.holdReason = times.holdReason;
    // Kept with the message, so an instance that never saw its principal's key sends the report alike.
    if (callbackUrl !== null && principal.reportFormat !== undefined) message.reportFormat = principal.reportFormat;
    if (callbackUrl !== null && profile.reportPer === 'part') message.reportPer = 'part';
    if (retainText !== undefined) message.retainText = retainText;
    return message;
  });
}

/**
 * The 200 body: one item per message, in request order, with the caller's field names.
 * Written out rather than stringified from objects with computed keys (each such object is
 * built the slow way); the text is the same as `JSON.stringify` gives for
 * `{ [referenceField]: externalId, [recipientField]: recipient, sms_count, message_ref }`.
 */
function acceptedBody(messages: readonly NewMessage[]): string {
  let body = '[';
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (i > 0) body += ',';
    body += `{"${m.referenceField}":${JSON.stringify(m.externalId)},"${m.recipientField}":${JSON.stringify(m.recipientAsSent ?? m.recipient)},"sms_count":${m.smsCount},"message_ref":${JSON.stringify(m.ref)}}`;
  }
  return `${body}]`;
}

/**
 * The span of a send request, ended when its response is: the root of its messages' traces
 * (their stored `traceparent`). `null` when no tracer provider is registered.
 */
function requestSpan(tracing: MessageTracing, req: Request, res: Response): TracedSpan | null {
  const span = tracing.request(req.method, req.originalUrl);
  if (span === null) return null;
  res.once('close', () => {
    const status = res.statusCode;
    span.set({ 'http.response.status_code': status });
    span.end(status >= 500 ? `HTTP ${status}` : undefined);
  });
  return span;
}

/** Returns the handler of one send endpoint (its validator decides which). */
export function sendHandler(deps: SendHandlerDeps): RequestHandler {
  const tracing = deps.tracing ?? null;
  // Not async: a request without a key goes straight to acceptMessages, and a throw here
  // reaches Express (or `chain`) as a rejection would.
  return (req, res) => {
    const traced = tracing === null ? null : requestSpan(tracing, req, res);
    const principal = principalOf(res);
    const key = idempotencyKeyOf(req, deps.idempotency !== null);
    const request = deps.validate(req.body);
    if (key === null) return acceptMessages(req, res, principal, request, null, traced);
    return acceptKeyed(req, res, principal, request, key, traced);
  };

  /** A request with an `Idempotency-Key`: a replay is answered from its record, a first request claims the key. */
  async function acceptKeyed(req: Request, res: Response, principal: Principal, request: SendRequest, key: string, traced: TracedSpan | null): Promise<void> {
    // After validation: a replay's body is the first request's, which was valid, and the
    // canonical hash then walks a body of known shape. Before the profile, the budgets and
    // the backlog: a replay passes none of them.
    const opening = deps.idempotency!.open(res, principal.id, key, request.endpoint, req.body);
    // open() makes its own promise when it makes one: `instanceof` tells it from a claim
    // without looking up `then` on every claim (a megamorphic lookup on a busy server).
    const claim = opening instanceof Promise ? await opening : opening;
    if (claim !== null) await acceptMessages(req, res, principal, request, claim, traced);
  }

  /** Stores the request's messages (with the key's record, if any), answers and announces them, and lets the key go. */
  async function acceptMessages(req: Request, res: Response, principal: Principal, request: SendRequest, claim: KeyClaim | null, traced: TracedSpan | null): Promise<void> {
    try {
      // The plug-ins may answer synchronously (the defaults do); awaiting a plain value would
      // still cost a promise turn per request.
      const resolving = deps.resolveProfile(request.profileCode, principal);
      const profile = isPromiseLike(resolving) ? await resolving : resolving;
      if (profile === null || profile === undefined) throw invalidProfile;
      const sender = senderFor(profile, request.from);
      const recipients = checkRecipients(request, profile, principal);
      const count = request.items.length;
      const times = requestTimes(request, recipients, profile, deps.storage, deps.now());
      // Scheduled messages do not hold the carrier until due: they join the bounds' count then.
      const dueNow = times.dueNow;
      const backlog = dueNow > 0 ? deps.backlog : null;
      if (backlog !== null) {
        const admitting = backlog.admit(principal, dueNow);
        if (admitting !== undefined) await admitting;
      }
      let budget: MessageCharge;
      try {
        const charging = deps.chargeMessages(res, count);
        budget = isPromiseLike(charging) ? await charging : charging;
      } catch (error) {
        backlog?.notStored(principal, dueNow);
        throw error;
      }
      let stored: Stored | null;
      try {
        stored = await store(res, principal, request, recipients, profile, sender, times, claim, traced);
      } catch (error) {
        await notStored(req, principal, dueNow, backlog, budget);
        throw error;
      }
      if (stored === null) {
        // Another instance stored a request with this key first, and its answer was given.
        await notStored(req, principal, dueNow, backlog, budget);
        return;
      }
      const { messages, handed, optedOut, lease, answer } = stored;
      sendJsonText(res, 200, answer);
      deps.credit?.stored(profile.code, messages);
      const requestId = requestIdOf(req);
      for (const message of messages) deps.emit('message.accepted', { message, requestId });
      deps.handOff.stored(handed, lease);
      // Accepted and answered like the rest; ended instead of handed to the worker.
      if (optedOut !== null) await deps.optOuts!.end(optedOut).catch((error: unknown) => deps.emit('error', { error, source: 'request', requestId }));
    } finally {
      // The key is let go once the request is answered, whatever happened.
      claim?.close();
    }
  }

  /**
   * Stores the request's messages, with its credit charge and its key's record, in one
   * atomic step, counted against its principal's spend caps. Resolves with what was stored,
   * or `null` when another instance's request with the same key was stored first and its
   * answer was given here; throws (402, 429, a storage error) when nothing was stored. A
   * traced request's messages keep its `traceparent`, and the insert has a span of its own.
   */
  async function store(
    res: Response,
    principal: Principal,
    request: SendRequest,
    recipients: readonly CheckedRecipient[],
    profile: Profile,
    sender: string,
    times: RequestTimes,
    claim: KeyClaim | null,
    traced: TracedSpan | null,
  ): Promise<Stored | null> {
    const messages = toMessages(request, recipients, principal, profile, sender, deps.now(), times);
    if (traced !== null) for (const message of messages) message.traceparent = traced.traceparent;
    // Premium messages are checked by the worker, right before they go out.
    const optedOut = deps.optOuts && request.endpoint === 'quick' && profile.honourOptOuts === true ? await deps.optOuts.blocked(messages) : null;
    const handed = optedOut === null ? messages : messages.filter((message) => !optedOut.has(message.ref));
    // Before anything is taken that a throw here would have to give back.
    const counting = deps.spendCaps?.counting(principal, messages, deps.now());
    // Without credit there is nothing to await, and no promise turn is spent on it.
    const charging = deps.credit?.charge(profile.code, messages);
    const charge = charging === undefined ? undefined : await charging;
    // A scheduled message is claimed when due, by whichever instance: not handed over. A
    // request some of whose messages are held is stored unleased whole (a lease covers all).
    const lease = times.dueNow === messages.length && handed.length > 0 ? deps.handOff.lease(handed.length, messages[0]!.priority) : null;
    // The messages to end are stored under the worker's lease, else under a short hold of
    // their own: either way no claim takes one before it is ended.
    const held = optedOut !== null && lease === null ? deps.optOuts!.holdLease(deps.now()) : null;
    const answer = acceptedBody(messages);
    const insert = traced === null ? null : tracing!.child(SPAN_NAMES.insert, traced.traceparent, { 'sms.message_count': messages.length });
    let counted: void | readonly number[];
    try {
      counted = await deps.storage.insertMessages(messages, lease ?? held ?? undefined, claim?.record(answer), charge, counting?.counters);
      insert?.end();
    } catch (error) {
      insert?.end(error);
      deps.handOff.notStored(handed.length, lease);
      deps.credit?.notStored(messages);
      // Another instance stored a request with this key first: answer as a retry would be.
      if (claim !== null && (await claim.answerTaken(res).catch(() => false))) return null;
      throw deps.credit?.refused(error) ?? deps.spendCaps?.refused(error, counting) ?? error;
    }
    deps.spendCaps?.stored(counting, counted);
    return { messages, handed, optedOut, lease, answer };
  }

  /**
   * A request counted in the backlog bounds and charged to the message budget stored
   * nothing (402, a key race lost to another instance, a storage failure): both are given
   * back, so the budget counts what was stored. A store that fails to give back is reported;
   * the refusal is answered all the same.
   */
  async function notStored(req: Request, principal: Principal, count: number, backlog: BacklogGate | null, budget: MessageCharge): Promise<void> {
    backlog?.notStored(principal, count);
    try {
      const giving = budget.giveBack();
      if (giving !== undefined) await giving;
    } catch (error) {
      deps.emit('error', { error, source: 'request', requestId: requestIdOf(req) });
    }
  }
}

/** What one request stored, for its answer and the hand-off. */
interface Stored {
  messages: NewMessage[];
  /** The messages handed to the worker: all but those to opted-out numbers. */
  handed: NewMessage[];
  /** The refs of the quick-send messages to opted-out numbers, or `null` when none was checked. */
  optedOut: Awaited<ReturnType<OptOutGate['blocked']>> | null;
  lease: ReturnType<MessageHandOff['lease']>;
  answer: string;
}

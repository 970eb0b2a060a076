/**
 * The two kinds of webhook the sender posts: a delivery report on a message that ended, and
 * an inbound (MO) message forwarded to its customer. Both go through the same lanes, guard,
 * signing, schedule and sender; what differs (the URL, the secret, the body, where the attempt
 * is recorded) is read from the webhook here.
 */
import type { DueCallback, DueInbound, InboundRecord } from '../storage/contract.js';
import { buildReport, type ReportFormatOf } from './payload.js';

/** An inbound message's webhook, claimed or handed over. */
export interface InboundWebhook extends DueInbound {
  /** Tells it from a report ({@link DueCallback}, which has no `kind`). */
  kind: 'inbound';
}

/** A webhook to post: a delivery report or an inbound message. */
export type Webhook = DueCallback | InboundWebhook;

/** True for an inbound message's webhook. */
export function isInbound(webhook: Webhook): webhook is InboundWebhook {
  return (webhook as Partial<InboundWebhook>).kind === 'inbound';
}

/** The `data` of an inbound webhook. */
export interface InboundData {
  /** The id the service assigned to the inbound message. */
  message_ref: string;
  /** The subscriber's number. */
  from: string;
  /** The short code (or number) it was sent to. */
  to: string;
  /** The text, multipart messages reassembled. */
  message: string;
  /** The profile of the short code's owner, or `null`. */
  profile_code: string | null;
  /** When it arrived, unix seconds as a string. */
  received_at: string;
}

/** An inbound message as POSTed to the customer's inbound URL: the delivery report's envelope. */
export interface InboundPayload {
  /** The webhook's id: the same on every retry (the receiver's dedup key). */
  uid: string;
  /** Always `system`. */
  actor_type: 'system';
  /** Always `sms_inbound`. */
  event_type: 'sms_inbound';
  /** When the message arrived, unix seconds as a string. */
  created_at: string;
  /** The message. */
  data: InboundData;
}

/** Builds the webhook of inbound message `inbound` with id `uid`; the same on every retry. */
export function buildInboundPayload(uid: string, inbound: InboundRecord): InboundPayload {
  const receivedAt = String(Math.floor(inbound.receivedAt / 1000));
  return {
    uid,
    actor_type: 'system',
    event_type: 'sms_inbound',
    created_at: receivedAt,
    data: {
      message_ref: inbound.ref,
      from: inbound.from,
      to: inbound.to,
      message: inbound.text,
      profile_code: inbound.profileCode,
      received_at: receivedAt,
    },
  };
}

/** Where `webhook` goes, or `null`. */
export function webhookUrl(webhook: Webhook): string | null {
  return isInbound(webhook) ? webhook.inbound.callbackUrl : webhook.message.callbackUrl;
}

/** The secret of `webhook`'s own (its principal's), or `null`. */
export function webhookSecret(webhook: Webhook): string | null {
  return isInbound(webhook) ? webhook.inbound.callbackSecret : webhook.message.callbackSecret;
}

/**
 * The body of `webhook`; a delivery report in the format kept with its message, else in its
 * principal's format now (`formatOf`: a message stored without one).
 */
export function webhookBody(webhook: Webhook, formatOf: ReportFormatOf): string {
  if (isInbound(webhook)) return JSON.stringify(buildInboundPayload(webhook.uid, webhook.inbound));
  const { message } = webhook;
  return JSON.stringify(buildReport(webhook.uid, message, message.reportFormat ?? formatOf(message.principalId), webhook.part));
}

/** The ref of the message `webhook` is about, for `error` events. */
export function webhookRef(webhook: Webhook): string {
  return isInbound(webhook) ? webhook.inbound.ref : webhook.message.ref;
}

/**
 * `GET /delivery-status/:message_ref` and `GET /delivery-status?external_id=...`: a
 * message's state as its sender may see it.
 */
import { parse as parseQuery } from 'node:querystring';
import type { Request, RequestHandler } from 'express';
import { SmsError } from '../errors.js';
import { submitAttempts } from '../lifecycle/attempts.js';
import type { MessageRecord, Storage } from '../storage/contract.js';
import { readNumber } from '../numbers/read-number.js';
import { principalOf } from './authenticate.js';
import { partsView } from './parts-view.js';
import { sendJsonText } from './respond.js';

/** Most messages one `external_id` lookup returns (real clients reuse one id for everything). */
export const EXTERNAL_ID_LOOKUP_LIMIT = 100;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/**
 * The public view of a stored message, with the caller's own field names: one item of every
 * answer that shows messages (the status lookups, and any list of them). The country and
 * line type are read again from the stored number when the record lacks them (a message
 * stored before they were kept, or by a storage that keeps only the seed's fields): the
 * stored number is international digits, which read the same without a default country.
 */
export function statusView(message: MessageRecord): Record<string, unknown> {
  const number = message.country === undefined || message.numberType === undefined ? readNumber(message.recipient, null) : null;
  const view: Record<string, unknown> = {
    message_ref: message.ref,
    [message.referenceField]: message.externalId,
    [message.recipientField]: message.recipientAsSent ?? message.recipient,
    normalized_recipient: message.recipient,
    country: number === null ? (message.country ?? null) : number.country,
    number_type: number === null ? (message.numberType ?? null) : number.type,
    profile_code: message.profileCode,
    status: message.state,
    status_reason: message.statusReason,
    status_description: message.statusDescription,
    sms_count: message.smsCount,
    submit_attempts: submitAttempts(message),
    created_at: iso(message.createdAt),
    updated_at: iso(message.updatedAt),
    send_at: iso(message.sendAt ?? null),
    valid_until: iso(message.validUntil ?? null),
    callback: callbackView(message),
    parts: partsView(message),
  };
  // Only once redacted (docs/retain-text.md): a message whose text is kept answers as before.
  if (message.textSha256 !== undefined && message.textSha256 !== null) {
    view.redacted = true;
    view.text_sha256 = message.textSha256;
  }
  return view;
}

/**
 * The public view of a message's delivery report (`callback` of {@link statusView}), or of
 * an inbound message's webhook (the same fields), `null` without a callback URL.
 */
export function callbackView(message: Pick<MessageRecord, 'callbackUrl' | 'callback'>): Record<string, unknown> | null {
  const callback = message.callback;
  if (message.callbackUrl === null) return null;
  return {
    url: message.callbackUrl,
    state: callback?.state ?? 'waiting',
    attempts: callback?.attempts ?? 0,
    last_status_code: callback?.lastStatusCode ?? null,
    last_error: callback?.lastError ?? null,
    next_attempt_at: iso(callback?.nextAttemptAt ?? null),
  };
}

const notFound = new SmsError('NOT_FOUND');

/** `GET /delivery-status/:message_ref`: 404 unless the message exists and is the caller's. */
export function statusByRef(storage: Storage): RequestHandler {
  return async (req, res) => {
    const ref = String(req.params.message_ref);
    // A U+0000 is in no stored string (see validate-request.ts), and PostgreSQL would
    // refuse the lookup itself with an error: such a ref names no message.
    if (ref.includes('\u0000')) throw notFound;
    const message = await storage.getMessage(principalOf(res).id, ref);
    if (message === null) throw notFound;
    sendJsonText(res, 200, JSON.stringify(statusView(message)));
  };
}

/**
 * The `external_id` query parameter, read from the URL as Express 5 reads a query by default
 * (`node:querystring`). Not from `req.query`: that is the host app's `query parser` setting,
 * which Express 4 defaults to `qs` (decoding a malformed escape differently) and a host may
 * turn off, and the endpoint must find the same messages on every host.
 */
export function externalIdOf(req: Request): unknown {
  const url = req.url;
  const start = url.indexOf('?');
  if (start === -1) return undefined;
  const end = url.indexOf('#', start);
  return parseQuery(url.slice(start + 1, end === -1 ? undefined : end)).external_id;
}

/** `GET /delivery-status?external_id=...`: all of the caller's matches, newest first. */
export function statusByExternalId(storage: Storage): RequestHandler {
  return async (req, res) => {
    const externalId = externalIdOf(req);
    if (typeof externalId !== 'string' || externalId === '') {
      throw new SmsError('VALIDATION_FAILED', 'external_id: is required (one query parameter)');
    }
    if (externalId.includes('\u0000')) {
      sendJsonText(res, 200, '[]');
      return;
    }
    const messages = await storage.findByExternalId(principalOf(res).id, externalId, EXTERNAL_ID_LOOKUP_LIMIT);
    sendJsonText(res, 200, JSON.stringify(messages.map(statusView)));
  };
}

/**
 * `POST {base}/create/preview` and `POST {base}/premium/preview`: what a send of the same
 * body would do, message by message, storing, sending and charging nothing
 * (docs/preview.md). Every answer comes from the send's own stages (validate-request.ts,
 * recipients.ts, send-times.ts, send.ts's `toMessages` and `senderFor`, the opt-out gate,
 * the delivery's routes), so a preview cannot disagree with the send it describes.
 *
 * An error of the whole request (its profile, `send_at`, `dlr_callback_url`, the number of
 * messages) is answered as the send answers it; an error of one message is that message's
 * item, with the code and the `details` the send would answer for it.
 */
import type { RequestHandler } from 'express';
import { SmsError } from '../errors.js';
import type { Profile, ProfileResolver } from '../auth/profiles.js';
import type { DeliveryAdapter } from '../delivery/contract.js';
import type { OptOutGate } from '../inbound/opt-out-gate.js';
import { countSms, smartEncode, splitSms } from '../sms/segments.js';
import type { NewMessage, Storage } from '../storage/contract.js';
import { isPromiseLike } from '../util/settle.js';
import { concatRefOf, outgoingPart } from '../worker/outgoing-part.js';
import { principalOf } from './authenticate.js';
import { checkRecipient, type CheckedRecipient } from './recipients.js';
import { sendJsonText } from './respond.js';
import { senderFor, toMessages } from './send.js';
import { requestTimes } from './send-times.js';
import type { RequestValidator, SendItem, SendRequest } from './validate-request.js';

/** What a preview handler needs: the send's stages, and nothing that stores or charges. */
export interface PreviewDeps {
  /** The send endpoint's own validator. */
  validate: RequestValidator;
  resolveProfile: ProfileResolver;
  /** Asked only what it can keep (`send_at`, validity) and the opt-out list; nothing is written. */
  storage: Storage;
  now: () => number;
  /** Whether the send takes credit (the `credit` option): the items then say how many units. */
  charges: boolean;
  /** The opt-out list; `null` when the storage keeps none. */
  optOuts: OptOutGate | null;
  /** The carrier, asked which route a message would take when it has routes. */
  delivery: DeliveryAdapter;
}

/** The request's items checked one by one: the request of those that passed, and the others' errors. */
interface CheckedItems {
  /** The request with only the items that passed, or `null` when none did. */
  request: SendRequest | null;
  /** Each passed item's index in the body, in order. */
  positions: number[];
  /** Each refused item's error, by its index in the body. */
  errors: Map<number, SmsError>;
  /** How many messages the body has. */
  total: number;
}

/** The item a validation error names (`messages[3].recipient: ...`, `to[3]: ...`). */
const ITEM_FIELD = /^(messages|to)\[(\d+)\]/;

/** The index of the item `error` is about, or -1 when it is about the whole request. */
function itemOf(error: unknown): number {
  if (!(error instanceof SmsError)) return -1;
  const match = ITEM_FIELD.exec(error.details);
  return match === null ? -1 : Number(match[2]);
}

/** `error` naming item `index` of the body (it was found on a body of that item alone). */
function renumbered(error: SmsError, index: number): SmsError {
  return new SmsError(error.code, error.details.replace(ITEM_FIELD, (_, field: string) => `${field}[${index}]`));
}

/**
 * Validates `body` as the send does; when that fails on one item, validates each item alone
 * (the body with that item only), so every item gets its own answer. An error about the
 * whole request is thrown, as the send throws it.
 */
function checkItems(validate: RequestValidator, body: unknown): CheckedItems {
  let field: string;
  try {
    const request = validate(body);
    return { request, positions: request.items.map((_, i) => i), errors: new Map(), total: request.items.length };
  } catch (error) {
    if (itemOf(error) < 0) throw error;
    field = ITEM_FIELD.exec((error as SmsError).details)![1]!;
  }
  const raw = body as Record<string, unknown>;
  // The list form takes one number as a plain string; an item error means the list was read.
  const list = (typeof raw[field] === 'string' ? [raw[field]] : raw[field]) as unknown[];
  const items: SendItem[] = [];
  const positions: number[] = [];
  const errors = new Map<number, SmsError>();
  let first: SendRequest | null = null;
  for (let i = 0; i < list.length; i++) {
    try {
      const one = validate({ ...raw, [field]: [list[i]] });
      first ??= one;
      items.push(one.items[0]!);
      positions.push(i);
    } catch (error) {
      if (itemOf(error) !== 0) throw error;
      errors.set(i, renumbered(error as SmsError, i));
    }
  }
  return { request: first === null ? null : { ...first, items }, positions, errors, total: list.length };
}

/** What smart encoding makes of an item's text, or `null` when it changes nothing. */
function smartEncodingOf(item: SendItem, profile: Profile): Record<string, unknown> | null {
  if (item.count.encoding !== 'UCS-2') return null;
  const smart = smartEncode(item.text);
  if (smart === item.text) return null;
  const count = countSms(smart);
  return { applied: profile.smartEncoding === true, encoding: count.encoding, sms_count: count.smsCount };
}

const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

/** The route `message` would take, or `null` when the carrier has no routes or none would take it. */
async function routeOf(delivery: DeliveryAdapter, message: NewMessage): Promise<string | null> {
  if (delivery.routeFor === undefined) return null;
  const texts = message.smsCount === 1 ? [message.text] : splitSms(message.text);
  return delivery.routeFor(outgoingPart(message, 0, texts, concatRefOf(message.ref)));
}

/** Returns the handler of one send endpoint's preview (its validator decides which). */
export function previewHandler(deps: PreviewDeps): RequestHandler {
  return async (req, res) => {
    const principal = principalOf(res);
    const { request, positions, errors, total } = checkItems(deps.validate, req.body);
    const answer = new Array<Record<string, unknown>>(total);
    if (request !== null) {
      const resolving = deps.resolveProfile(request.profileCode, principal);
      const profile = isPromiseLike(resolving) ? await resolving : resolving;
      if (profile === null || profile === undefined) throw new SmsError('INVALID_PROFILE');
      const sender = senderFor(profile, request.from);
      const now = deps.now();
      const passed: number[] = [];
      const recipients: CheckedRecipient[] = [];
      for (let j = 0; j < request.items.length; j++) {
        try {
          recipients.push(checkRecipient(request, j, profile, principal));
          passed.push(j);
        } catch (error) {
          if (!(error instanceof SmsError)) throw error;
          errors.set(positions[j]!, renumbered(error, positions[j]!));
        }
      }
      const sendable: SendRequest = { ...request, items: passed.map((j) => request.items[j]!) };
      const times = requestTimes(sendable, recipients, profile, deps.storage, now);
      const messages = toMessages(sendable, recipients, principal, profile, sender, now, times);
      // Quick-send profiles that honour opt-outs end such messages at once; premium ones, in the worker.
      const optOutsApply = deps.optOuts !== null && (request.endpoint === 'premium' || profile.honourOptOuts === true);
      const optedOut = optOutsApply && messages.length > 0 ? await deps.optOuts!.blocked(messages) : null;
      for (let k = 0; k < messages.length; k++) {
        const message = messages[k]!;
        const item = sendable.items[k]!;
        answer[positions[passed[k]!]!] = {
          index: positions[passed[k]!]!,
          [request.recipientField]: message.recipientAsSent ?? message.recipient,
          normalized_recipient: message.recipient,
          [request.referenceField]: item.reference,
          encoding: message.encoding,
          sms_count: message.smsCount,
          smart_encoding: smartEncodingOf(item, profile),
          units: deps.charges ? message.smsCount : null,
          sender: message.sender,
          route: await routeOf(deps.delivery, message),
          opted_out: optedOut?.has(message.ref) ?? false,
          send_at: iso(message.sendAt),
          hold_reason: message.holdReason ?? null,
          valid_until: iso(message.validUntil),
          error: null,
        };
      }
    }
    for (const [index, error] of errors) answer[index] = { index, error: { details: error.details, code: error.code } };
    sendJsonText(res, 200, JSON.stringify(answer));
  };
}

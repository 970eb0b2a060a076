/**
 * Turns a parsed JSON body into a {@link SendRequest}, or throws a 422 naming the field.
 *
 * The ajv validators are compiled once, when the router is created. Rules ajv cannot say
 * (well-formed UTF-16, the SMS-unit limit, the callback address policy) are checked after
 * it, and their answers name the field the same way.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { SmsError } from '../errors.js';
import type { LimitOptions } from './options.js';
import { countSms, type SmsCount } from '../sms/segments.js';
import type { Endpoint, RecipientField, ReferenceField } from '../storage/contract.js';
import { premiumListSchema, premiumMessagesSchema, quickSendSchema } from './schemas.js';
import { parseRfc3339 } from '../util/rfc3339.js';

/** One message of a request, checked. */
export interface SendItem {
  /** Destination number. */
  recipient: string;
  /** The text. */
  text: string;
  /** Its SMS units and encoding. */
  count: SmsCount;
  /** `message_type`, default 1. */
  messageType: number;
  /** `req_type`, default 1. */
  reqType: number;
  /** The caller's reference as a string (`""` if it sent that), or `null` when it sent none. */
  reference: string | null;
}

/** A checked send request, in one shape whichever endpoint and form it came in. */
export interface SendRequest {
  /** The endpoint. */
  endpoint: Endpoint;
  /** `profile_code`, as a string. */
  profileCode: string;
  /** The premium list form's `from`, if given (`""` and `null` count as not given). */
  from: string | null;
  /** The messages, in request order. */
  items: SendItem[];
  /** `dlr_callback_url`, if given (`""` and `null` count as not given). */
  callbackUrl: string | null;
  /** Field name the caller used for recipients. */
  recipientField: RecipientField;
  /** Field name the caller used for its reference. */
  referenceField: ReferenceField;
  /** `send_at` as epoch ms, if given (the caller checks it against the clock: send.ts). */
  sendAt: number | null;
  /** `validity_period`, seconds, if given. */
  validityPeriod: number | null;
}

/** Returns why a callback URL is refused, or `null` when it is acceptable. */
export type CallbackUrlCheck = (url: string) => string | null;

/** Validates one endpoint's bodies. */
export type RequestValidator = (body: unknown) => SendRequest;

interface RawItem {
  recipient?: string;
  mobile_number?: string;
  message: string;
  message_type?: number | null;
  req_type?: number | null;
  external_id?: string | number | null;
}

/** The time-aware fields both forms take (schemas.ts). */
interface RawTimes {
  send_at?: string | number | null;
  validity_period?: number | null;
}

interface RawMessagesBody extends RawTimes {
  profile_code: string | number;
  messages: RawItem[];
  dlr_callback_url?: string | null;
}

interface RawListBody extends RawTimes {
  profile_code: string | number;
  to: string[];
  message: string;
  from?: string | null;
  message_id?: string | number | null;
  message_type?: number | null;
  req_type?: number | null;
  dlr_callback_url?: string | null;
}

/** `/messages/3/recipient` -> `messages[3].recipient`. */
function fieldOf(error: ErrorObject): string {
  let field = '';
  for (const segment of error.instancePath.split('/').slice(1)) {
    field += /^\d+$/.test(segment) ? `[${segment}]` : field === '' ? segment : `.${segment}`;
  }
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    field = field === '' ? missing : `${field}.${missing}`;
  }
  return field === '' ? 'body' : field;
}

/** What is wrong with a phone number that failed the pattern, in words a caller can act on. */
export function phoneProblem(value: unknown): string {
  const example = 'digits in international format, country code first, no plus sign (e.g. 254712345678)';
  if (typeof value !== 'string') return `must be a string of ${example}`;
  if (value.startsWith('+')) return `must not start with "+": write ${example}`;
  if (/\s/.test(value)) return `must not contain spaces: write ${example}`;
  if (/^0/.test(value)) return `must start with the country code, not 0: write ${example}`;
  if (!/^\d+$/.test(value)) return `must contain digits only: write ${example}`;
  return `must be 8 to 15 digits: write ${example}`;
}

function describe(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'type': {
      // `null` is allowed only as "absent", so it is not offered as a thing to send.
      const types = ([] as string[]).concat(params.type as string | string[]).filter((t) => t !== 'null');
      const names = types.map((t) => (t === 'integer' || t === 'object' || t === 'array' ? `an ${t}` : `a ${t}`));
      return `must be ${names.join(' or ')}`;
    }
    case 'pattern':
      return phoneProblem(error.data);
    case 'minLength':
      return 'must not be empty';
    case 'maxLength':
      return `must be at most ${String(params.limit)} characters`;
    case 'minItems':
      return `must have at least ${String(params.limit)} item`;
    case 'maxItems':
      return `must have at most ${String(params.limit)} items`;
    case 'minimum':
      return `must be at least ${String(params.limit)}`;
    case 'maximum':
      return `must be at most ${String(params.limit)}`;
    default:
      return error.message ?? 'is invalid';
  }
}

function fail(field: string, problem: string): never {
  throw new SmsError('VALIDATION_FAILED', `${field}: ${problem}`);
}

function check(validate: ValidateFunction, body: unknown): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) fail('body', 'must be a JSON object');
  if (validate(body)) return;
  const error = validate.errors![0]!;
  fail(fieldOf(error), describe(error));
}

/**
 * Refuses a string no storage can keep as sent: a lone UTF-16 surrogate (UTF-8 storage
 * turns it into U+FFFD) or U+0000 (PostgreSQL refuses it in text). Checked here, for every
 * stored string, so the answer is the same 422 whichever storage the host chose.
 */
function checkStorable(field: string, value: string): void {
  if (!value.isWellFormed()) fail(field, 'contains a lone UTF-16 surrogate');
  if (value.includes('\u0000')) fail(field, 'must not contain U+0000 (NUL)');
}

/** Checks the text rules ajv cannot express, and counts the SMS units once. */
function countText(field: string, text: string, limits: Required<LimitOptions>): SmsCount {
  checkStorable(field, text);
  const count = countSms(text);
  if (count.smsCount > limits.maxSegments) {
    fail(field, `needs ${count.smsCount} SMS units, more than the limit of ${limits.maxSegments}`);
  }
  return count;
}

/**
 * The optional string fields where `""` means "none", as `null` does: real clients of the
 * original service (PHP ones among them) send the empty string when they want no report or
 * no particular sender, and were answered 200 there.
 */
function givenText(value: string | null | undefined): string | null {
  return value === undefined || value === null || value === '' ? null : value;
}

function callbackOf(body: { dlr_callback_url?: string | null }, checkUrl: CallbackUrlCheck): string | null {
  const url = givenText(body.dlr_callback_url);
  if (url === null) return null;
  checkStorable('dlr_callback_url', url);
  const problem = checkUrl(url);
  if (problem !== null) fail('dlr_callback_url', problem);
  return url;
}

/**
 * The caller's reference. Unlike the fields of {@link givenText}, `""` is a value here: it is
 * stored, echoed and sent in reports as `""` (clients compare the echo with what they sent),
 * and only a missing or `null` one is replaced by a generated reference.
 */
function referenceOf(field: string, value: string | number | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') checkStorable(field, value);
  return String(value);
}

/** `send_at` as epoch ms, or `null` when not given; a 422 naming it when it is no time. */
function sendAtOf(value: string | number | null | undefined): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number') return value * 1000;
  const ms = parseRfc3339(value);
  if (!Number.isFinite(ms)) fail('send_at', 'must be an RFC 3339 time such as 2026-12-01T09:00:00Z, or Unix seconds');
  return ms;
}

/**
 * Compiles the validators of both endpoints for these limits. Call once per router.
 */
export function createValidators(
  limits: Required<LimitOptions>,
  checkUrl: CallbackUrlCheck,
): { quick: RequestValidator; premium: RequestValidator } {
  // `verbose` keeps the failing value on the error, so a phone number's answer can say
  // what is wrong with it; unknown fields are ignored for compatibility with old clients.
  const ajv = new Ajv({ allErrors: false, verbose: true, allowUnionTypes: true, strict: true });
  const quick = ajv.compile(quickSendSchema(limits));
  const premiumMessages = ajv.compile(premiumMessagesSchema(limits));
  const premiumList = ajv.compile(premiumListSchema(limits));

  const fromMessages = (endpoint: Endpoint, field: 'recipient' | 'mobile_number', body: RawMessagesBody): SendRequest => ({
    endpoint,
    profileCode: String(body.profile_code),
    from: null,
    items: body.messages.map((item, i) => ({
      recipient: item[field]!,
      text: item.message,
      count: countText(`messages[${i}].message`, item.message, limits),
      messageType: item.message_type ?? 1,
      reqType: item.req_type ?? 1,
      reference: referenceOf(`messages[${i}].external_id`, item.external_id),
    })),
    callbackUrl: callbackOf(body, checkUrl),
    recipientField: field,
    referenceField: 'external_id',
    // Written out, not spread from a helper's object: a literal with a spread is built
    // property by property, on every request.
    sendAt: sendAtOf(body.send_at),
    validityPeriod: body.validity_period ?? null,
  });

  return {
    quick(body) {
      check(quick, body);
      return fromMessages('quick', 'recipient', body as RawMessagesBody);
    },
    premium(body) {
      const raw = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
      // `null` is absent here too: one client class for both forms sends the other's as null.
      const given = (field: string): boolean => raw[field] !== undefined && raw[field] !== null;
      // Both forms at once is a client's mistake: taking one would silently drop the
      // numbers of the other, so it is refused rather than read as an unknown field.
      if (given('messages') && given('to')) fail('to', 'must not be sent with messages: use one form');
      const listForm = given('to');
      if (!listForm) {
        check(premiumMessages, body);
        return fromMessages('premium', 'mobile_number', body as RawMessagesBody);
      }
      // The published list form allows one number as a plain string.
      const normalised = typeof raw.to === 'string' ? { ...raw, to: [raw.to] } : raw;
      check(premiumList, normalised);
      const list = normalised as unknown as RawListBody;
      const count = countText('message', list.message, limits);
      const reference = referenceOf('message_id', list.message_id);
      const from = givenText(list.from);
      if (from !== null) checkStorable('from', from);
      return {
        endpoint: 'premium',
        profileCode: String(list.profile_code),
        from,
        items: list.to.map((recipient) => ({
          recipient,
          text: list.message,
          count,
          messageType: list.message_type ?? 1,
          reqType: list.req_type ?? 1,
          reference,
        })),
        callbackUrl: callbackOf(list, checkUrl),
        recipientField: 'to',
        referenceField: 'message_id',
        sendAt: sendAtOf(list.send_at),
        validityPeriod: list.validity_period ?? null,
      };
    },
  };
}

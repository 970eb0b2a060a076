/**
 * The recipient stage of a send, once its profile is known: each number is read
 * (numbers/read-number.ts), judged by the profile's or principal's `numbers` policy, and
 * written the one way it is stored and sent (international digits). A refused number is a
 * 422 naming the field, before anything of the request is charged or stored.
 */
import { SmsError } from '../errors.js';
import type { Profile } from '../auth/profiles.js';
import type { Principal } from '../auth/principal.js';
import { readNumber } from '../numbers/read-number.js';
import { DEFAULT_NUMBER_POLICY, numberProblem } from '../numbers/policy.js';
import { PHONE_PATTERN } from './schemas.js';
import { phoneProblem, type SendRequest } from './validate-request.js';

/** One recipient as stored: what the carrier is given, and what it was read as. */
export interface CheckedRecipient {
  /** International digits without `+`: stored as the message's `recipient`. */
  recipient: string;
  /** What the caller wrote, when it differs from {@link recipient} (echoed back); else `null`. */
  asSent: string | null;
  /** ISO 3166 alpha-2 country, or `null` when the metadata cannot tell. */
  country: string | null;
  /** Line type (`mobile`, `fixed_line_or_mobile`, ...), or `null` when the metadata cannot tell. */
  numberType: string | null;
}

const SEED_FORMAT = new RegExp(PHONE_PATTERN);

function fieldOf(request: SendRequest, index: number): string {
  return request.recipientField === 'to' ? `to[${index}]` : `messages[${index}].${request.recipientField}`;
}

/**
 * The request's recipients, in item order, checked and written as stored; throws a 422
 * (`VALIDATION_FAILED`, `INVALID_RECIPIENT` or `NOT_MOBILE`) naming the first refused one.
 * Without a `defaultCountry`, only the seed format is read, and any other writing gets the
 * seed's own answer.
 */
export function checkRecipients(request: SendRequest, profile: Profile, principal: Principal): CheckedRecipient[] {
  const checked = new Array<CheckedRecipient>(request.items.length);
  for (let i = 0; i < checked.length; i++) checked[i] = checkRecipient(request, i, profile, principal);
  return checked;
}

/**
 * The recipient of item `index` of `request`, checked and written as stored, as
 * {@link checkRecipients} checks each; throws its 422 naming the field. For a caller that
 * needs every item's answer (the send preview) rather than the first refusal.
 */
export function checkRecipient(request: SendRequest, index: number, profile: Profile, principal: Principal): CheckedRecipient {
  const policy = profile.numbers ?? principal.numbers ?? DEFAULT_NUMBER_POLICY;
  const defaultCountry = profile.defaultCountry ?? null;
  const raw = request.items[index]!.recipient;
  if (defaultCountry === null && !SEED_FORMAT.test(raw)) {
    throw new SmsError('VALIDATION_FAILED', `${fieldOf(request, index)}: ${phoneProblem(raw)}`);
  }
  const read = readNumber(raw, defaultCountry);
  const problem = numberProblem(read, policy);
  if (problem !== null) throw new SmsError(problem.code, `${fieldOf(request, index)}: ${problem.problem}`);
  // `digits` lets through a number the metadata cannot read: it is stored as written.
  const recipient = read.digits ?? raw;
  return { recipient, asSent: recipient === raw ? null : raw, country: read.country, numberType: read.type };
}

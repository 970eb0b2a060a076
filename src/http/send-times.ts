/**
 * The time-aware fields of a send (docs/endpoints.md#scheduled-sends-and-validity): when its
 * messages are due and until when they may go, from the request's `send_at` and
 * `validity_period` (or the profile's `validityPeriod`), checked against the clock and
 * against what the storage can keep.
 */
import { SmsError } from '../errors.js';
import type { Profile } from '../auth/profiles.js';
import type { Storage, TimedFields } from '../storage/contract.js';
import { SEND_AT_MAX_AHEAD_MS } from './schemas.js';
import type { SendRequest } from './validate-request.js';
import { quietHoursEnd } from '../numbers/quiet-hours.js';
import { recipientZone } from '../numbers/recipient-zone.js';
import type { CheckedRecipient } from './recipients.js';

/** A request's times, as its messages carry them (`sendAt` only when later than now). */
export interface MessageTimes extends TimedFields {
  sendAt: number | null;
  validUntil: number | null;
  /** `quiet_hours` when `sendAt` is the end of the profile's quiet hours, else `null`. */
  holdReason: 'quiet_hours' | null;
}

const AT_ONCE: MessageTimes = { sendAt: null, validUntil: null, holdReason: null };

/** The times of a request's messages: one for all, or each its own where quiet hours hold some. */
export interface RequestTimes {
  /** The times the request asked for (`send_at`, `validity_period`): every message's unless {@link each} says otherwise. */
  asked: MessageTimes;
  /** Each message's times, in item order, when quiet hours apply to the request; else `null`. */
  each: MessageTimes[] | null;
  /** How many of the messages are due at once (not stored `scheduled`). */
  dueNow: number;
}

/** The times of message `index` of a request timed `times`. */
export function timesOf(times: RequestTimes, index: number): MessageTimes {
  return times.each === null ? times.asked : times.each[index]!;
}

/**
 * The times of `request`'s messages to `recipients` (in item order), accepted at `now`: a
 * `send_at` in the past means now; the validity period counts from when the message is due.
 * Throws a 422 naming the field when `send_at` is too far ahead, or when the storage cannot
 * keep what was asked.
 */
export function requestTimes(request: SendRequest, recipients: readonly CheckedRecipient[], profile: Profile, storage: Storage, now: number): RequestTimes {
  const asked = askedTimes(request, profile, storage, now);
  if (profile.quietHours === undefined || profile.priority === 'transactional' || storage.promoteScheduled === undefined) {
    return { asked, each: null, dueNow: asked.sendAt === null ? recipients.length : 0 };
  }
  return quietTimes(asked, recipients, profile, now);
}

/**
 * The times of a bulk request under quiet hours: each message held to the end of the window
 * in its recipient's zone (recipient-zone.ts) when it is due inside it. The validity period
 * still counts from when it was due: one that ends inside the window expires there, unsent,
 * as it would have in the queue. A recipient whose zone cannot be told is not held.
 */
function quietTimes(asked: MessageTimes, recipients: readonly CheckedRecipient[], profile: Profile, now: number): RequestTimes {
  const due = asked.sendAt ?? now;
  const fallback = profile.timeZone ?? null;
  // A request's recipients share a handful of zones: each zone's window is worked out once.
  const byZone = new Map<string | null, MessageTimes>();
  const each = new Array<MessageTimes>(recipients.length);
  let dueNow = 0;
  for (let i = 0; i < recipients.length; i++) {
    const zone = recipientZone(recipients[i]!.country, fallback);
    let times = byZone.get(zone);
    if (times === undefined) {
      const end = zone === null ? null : quietHoursEnd(due, profile.quietHours!, zone);
      times = end === null ? asked : { sendAt: end, validUntil: asked.validUntil, holdReason: 'quiet_hours' };
      byZone.set(zone, times);
    }
    each[i] = times;
    if (times.sendAt === null) dueNow++;
  }
  return { asked, each, dueNow };
}

function askedTimes(request: SendRequest, profile: Profile, storage: Storage, now: number): MessageTimes {
  const validity = request.validityPeriod ?? profile.validityPeriod ?? null;
  if (request.sendAt === null && validity === null) return AT_ONCE;
  const sendAt = request.sendAt !== null && request.sendAt > now ? request.sendAt : null;
  if (sendAt !== null && sendAt - now > SEND_AT_MAX_AHEAD_MS) {
    throw new SmsError('VALIDATION_FAILED', 'send_at: must be at most 30 days ahead');
  }
  if (storage.promoteScheduled === undefined || storage.expireUnsent === undefined) {
    const field = sendAt !== null ? 'send_at' : 'validity_period';
    throw new SmsError('VALIDATION_FAILED', `${field}: this gateway's storage cannot keep it`);
  }
  return { sendAt, validUntil: validity === null ? null : (sendAt ?? now) + validity * 1000, holdReason: null };
}

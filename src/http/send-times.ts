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

/** A request's times, as its messages carry them (`sendAt` only when later than now). */
export interface MessageTimes extends TimedFields {
  sendAt: number | null;
  validUntil: number | null;
  /** `quiet_hours` when `sendAt` is the end of the profile's quiet hours, else `null`. */
  holdReason: 'quiet_hours' | null;
}

const AT_ONCE: MessageTimes = { sendAt: null, validUntil: null, holdReason: null };

/**
 * The times of `request`'s messages, accepted at `now`: a `send_at` in the past means now;
 * the validity period counts from when the message is due. Throws a 422 naming the field
 * when `send_at` is too far ahead, or when the storage cannot keep what was asked.
 */
export function requestTimes(request: SendRequest, profile: Profile, storage: Storage, now: number): MessageTimes {
  const times = askedTimes(request, profile, storage, now);
  return profile.quietHours === undefined ? times : quietTimes(times, profile, storage, now);
}

/**
 * `times`, held to the end of the profile's quiet hours when they are due inside them (a
 * bulk profile's only). The validity period still counts from when they were due: one
 * that ends inside the window expires there, unsent, as it would have in the queue. A
 * storage that cannot keep scheduled messages sends them at once.
 */
function quietTimes(times: MessageTimes, profile: Profile, storage: Storage, now: number): MessageTimes {
  if (profile.priority === 'transactional' || profile.timeZone === undefined || storage.promoteScheduled === undefined) return times;
  const end = quietHoursEnd(times.sendAt ?? now, profile.quietHours!, profile.timeZone);
  return end === null ? times : { sendAt: end, validUntil: times.validUntil, holdReason: 'quiet_hours' };
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

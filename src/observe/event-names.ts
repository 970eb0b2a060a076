/**
 * The names of the router's events, at run time: the type check of `SmsEvents` does not reach
 * plain JavaScript, where a misspelt name would wait forever for an event never emitted.
 */
import { nearest } from '../util/known-keys.js';

/** Every event the router emits (the keys of `SmsEvents`; a test keeps the two the same). */
export const SMS_EVENT_NAMES = [
  'message.accepted', 'message.submitted', 'message.status', 'message.retrying',
  'credit.charged', 'credit.refunded', 'message.inbound', 'queue.depth',
  'dlr.sent', 'dlr.retrying', 'dlr.failed', 'callback.endpoint_paused', 'callback.endpoint_resumed', 'inbound.sent', 'inbound.retrying', 'inbound.failed',
  'subscriber.opted_out', 'subscriber.opted_in', 'carrier.connection', 'carrier.route',
  'request.rejected', 'key.expired', 'spend_cap.warning', 'subscriber.erased', 'error',
] as const;

const KNOWN: ReadonlySet<unknown> = new Set(SMS_EVENT_NAMES);

/**
 * Throws a TypeError, naming `method`, unless `name` is one of {@link SMS_EVENT_NAMES}; the
 * nearest name, when one is near, is suggested as an option typo's is.
 */
export function assertEventName(method: string, name: unknown): void {
  if (KNOWN.has(name)) return;
  if (typeof name !== 'string') throw new TypeError(`${method}: an event name is a string, got ${typeof name}`);
  const best = nearest(name, SMS_EVENT_NAMES);
  throw new TypeError(`${method}: unknown event "${name}".${best === undefined ? '' : ` Did you mean "${best}"?`}`);
}

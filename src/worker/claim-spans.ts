/**
 * The `sms.claim` span: a worker's claim of queued messages, recorded in each claimed
 * message's own trace.
 *
 * One claim takes many messages, each of its own trace. One span for the whole claim with a
 * link to each message would sit in a trace of its own: a viewer opening one message's trace
 * shows links only on the span that holds them, so that trace would jump from its insert to
 * its submit with nothing to say why it waited, or which attempt this is. So each claimed
 * message gets its own span, a child of its stored trace, all of one claim sharing its start
 * and end (the storage call) and `sms.claim.size`, how many messages the call took: the
 * message's wait in the queue shows as the gap before it, the claim's cost as its length.
 *
 * A message handed to this instance's worker at its insert is taken without a storage call:
 * its span ({@link handOffSpans}) marks that moment, `sms.claim.source` telling the two
 * apart. One retried after a failed submit, or claimed after another instance's lease ran
 * out, has one span per claim.
 */
import type { MessageRecord } from '../storage/contract.js';
import { SPAN_NAMES, type MessageTracing } from '../observe/tracing.js';

/** A claim of up to `limit` messages at `now`, as the claim loop makes it. */
export type ClaimMessages = (limit: number, now: number) => Promise<readonly MessageRecord[]>;

/** `claim`, recording an `sms.claim` span in the trace of each message it returns. */
export function tracedClaim(tracing: MessageTracing, claim: ClaimMessages): ClaimMessages {
  return async (limit, now) => {
    // The wall clock, as the tracer reads it for a span's start and end: the messages, and
    // so the traces, are known only once the claim is done.
    const startedAt = Date.now();
    const messages = await claim(limit, now);
    const size = messages.length;
    for (const message of messages) {
      // An untraced message (no tracer provider when it was sent) costs nothing here.
      if (message.traceparent == null) continue;
      const fields = { 'sms.message_ref': message.ref, 'sms.claim.size': size, 'sms.submit.attempt': message.attempts + 1, 'sms.claim.source': 'storage' };
      tracing.child(SPAN_NAMES.claim, message.traceparent, fields, 'INTERNAL', startedAt)?.end();
    }
    return messages;
  };
}

/**
 * Records an `sms.claim` span in the trace of each of `messages`, handed to the worker as
 * they were stored and taken by it together (`sms.claim.source`: `hand-off`).
 */
export function handOffSpans(tracing: MessageTracing, messages: readonly MessageRecord[]): void {
  const size = messages.length;
  for (const message of messages) {
    if (message.traceparent == null) continue;
    const fields = { 'sms.message_ref': message.ref, 'sms.claim.size': size, 'sms.submit.attempt': 1, 'sms.claim.source': 'hand-off' };
    tracing.child(SPAN_NAMES.claim, message.traceparent, fields, 'INTERNAL')?.end();
  }
}

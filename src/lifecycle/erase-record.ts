/**
 * What erasing one subscriber (`sms.erase`, a data-subject request; docs/erase.md) leaves of
 * each stored copy of their number and texts: the number becomes {@link ERASED_NUMBER} with
 * its SHA-256 kept beside it, and the text `[redacted]` with its SHA-256, as `retainText`
 * redacts it (retain-text.ts). The rules are the library's; a storage stores the records it
 * is given, or applies these functions when it is a full `Storage` of the host's own.
 *
 * @module
 */
import { hash } from 'node:crypto';
import { isRedacted, redactText, REDACTED_TEXT } from './retain-text.js';

/** The number an erased record has instead of the subscriber's. */
export const ERASED_NUMBER = '[erased]';

/** The SHA-256 (hex) of `value`'s UTF-8 text. */
export function sha256(value: string): string {
  return hash('sha256', value, 'hex');
}

/** What the rules read and change of a message record (`MessageRecord`'s fields of these names). */
export interface ErasableMessage {
  recipient: string;
  recipientAsSent?: string | null;
  recipientSha256?: string | null;
  text: string;
  textSha256?: string | null;
}

/** Whether the number of `record` was erased. */
function isErased(record: Pick<ErasableMessage, 'recipientSha256'>): boolean {
  return record.recipientSha256 !== undefined && record.recipientSha256 !== null;
}

/**
 * Erases `record` (a new object the caller owns): its number becomes the marker with the
 * number's SHA-256 kept, the number as the caller wrote it goes, and its text is redacted
 * unless it already is.
 */
export function eraseMessage(record: ErasableMessage): void {
  if (!isErased(record)) {
    record.recipientSha256 = sha256(record.recipient);
    record.recipient = ERASED_NUMBER;
  }
  if (record.recipientAsSent !== undefined && record.recipientAsSent !== null) record.recipientAsSent = null;
  if (!isRedacted(record)) redactText(record);
}

/** What the rules change of an inbound (MO) record (`InboundRecord`'s fields of these names). */
export interface ErasableInbound {
  from: string;
  text: string;
}

/**
 * Erases an inbound record from the subscriber (a new object the caller owns): its sender
 * becomes the marker and its text `[redacted]`, with no hash kept: the text is the
 * subscriber's own, which no customer needs to prove.
 */
export function eraseInbound(record: ErasableInbound): void {
  record.from = ERASED_NUMBER;
  record.text = REDACTED_TEXT;
}

/**
 * The answer body kept under an idempotency key (a send's answer, JSON) with the number of
 * each message of `refs` replaced by the marker; `null` when it names none of them (or is
 * not JSON) and so stays as it is. The send's answer lists each message as an object with
 * its `message_ref` and its recipient under the request's field name.
 */
export function eraseAnswerBody(body: string, refs: ReadonlySet<string>): string | null {
  let answer: unknown;
  try {
    answer = JSON.parse(body);
  } catch {
    return null;
  }
  let changed = false;
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    const object = value as Record<string, unknown>;
    if (typeof object.message_ref === 'string' && refs.has(object.message_ref)) {
      for (const field of ['recipient', 'mobile_number', 'to']) {
        if (typeof object[field] === 'string' && object[field] !== ERASED_NUMBER) {
          object[field] = ERASED_NUMBER;
          changed = true;
        }
      }
    }
    for (const inner of Object.values(object)) if (typeof inner === 'object') visit(inner);
  };
  visit(answer);
  return changed ? JSON.stringify(answer) : null;
}

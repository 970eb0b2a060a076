/**
 * How long a message's text is kept (`retainText` of a profile or a principal;
 * docs/retain-text.md): `always` (the default: until retention purges the message),
 * `until-final` (redacted in the write that ends the message), or `days:N` (redacted N days
 * after acceptance, by the first sweep that sees it due once the message has ended, or in
 * the write that ends it when that is later). A redacted text is {@link REDACTED_TEXT}, and
 * the record keeps the SHA-256 of the text it replaced, so a sender can still prove what was
 * sent; its parts, counts and costs stay. The rules are the library's; a storage stores the
 * record it is given.
 *
 * @module
 */
import { hash } from 'node:crypto';
import { isTerminal, type MessageState } from './states.js';

/** What `retainText` may be: `always`, `until-final` or `days:N` (N whole days, 1 to 36,500). */
export type RetainText = 'always' | 'until-final' | `days:${number}`;

/** What a message keeps of its policy: absent or `null` for `always`. */
export type TextRetention = Exclude<RetainText, 'always'>;

/** The text a redacted message has instead of its own. */
export const REDACTED_TEXT = '[redacted]';

const DAY_MS = 86_400_000;
const MAX_DAYS = 36_500;

/** What the rules read of a message record (`MessageRecord`'s fields of these names). */
export interface RetainedText {
  text: string;
  state: MessageState;
  createdAt: number;
  retainText?: TextRetention | null;
  textSha256?: string | null;
}

/** A `retainText` that cannot be read, with the reason; the caller words the error. */
export class RetainTextProblem extends Error {
  override name = 'RetainTextProblem';
}

/**
 * `value` as a policy to keep with a message: `undefined` for `always` (or none given).
 *
 * @throws RetainTextProblem for anything but `'always'`, `'until-final'` or `'days:N'`.
 */
export function readRetainText(value: unknown): TextRetention | undefined {
  if (value === undefined || value === 'always') return undefined;
  if (value === 'until-final') return value;
  const days = typeof value === 'string' ? /^days:([1-9]\d{0,4})$/.exec(value) : null;
  if (days !== null && Number(days[1]) <= MAX_DAYS) return value as TextRetention;
  throw new RetainTextProblem(
    `retainText must be 'always', 'until-final' or 'days:N' (N whole days from 1 to ${MAX_DAYS}), got ${typeof value === 'string' ? JSON.stringify(value) : typeof value}`,
  );
}

/** When the text of `record` is due to be redacted under `days:N`, epoch ms; `null` under any other policy. */
export function redactAt(record: Pick<RetainedText, 'retainText' | 'createdAt'>): number | null {
  const policy = record.retainText;
  if (policy === undefined || policy === null || !policy.startsWith('days:')) return null;
  return record.createdAt + Number(policy.slice(5)) * DAY_MS;
}

/** Whether the text of `record` was redacted. */
export function isRedacted(record: Pick<RetainedText, 'textSha256'>): boolean {
  return record.textSha256 !== undefined && record.textSha256 !== null;
}

/**
 * Whether the ended `record` is to be redacted at `now`: under `until-final` always, under
 * `days:N` once its time has come; never twice.
 */
export function redactsAt(record: RetainedText, now: number): boolean {
  if (isRedacted(record) || !isTerminal(record.state)) return false;
  if (record.retainText === 'until-final') return true;
  const at = redactAt(record);
  return at !== null && at <= now;
}

/** Replaces the text of `record` (a new object the caller owns) with the marker, keeping its SHA-256 (hex). */
export function redactText(record: Pick<RetainedText, 'text' | 'textSha256'>): void {
  record.textSha256 = hash('sha256', record.text, 'hex');
  record.text = REDACTED_TEXT;
}

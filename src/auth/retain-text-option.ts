/**
 * `retainText` where a profile or a principal gives it: checked at construction in a
 * `staticProfiles` or `staticKeys` table, and read on each send from a host's resolver or
 * verifier (docs/retain-text.md).
 */
import { EventError, OptionError } from '../errors.js';
import { readRetainText, RetainTextProblem, type TextRetention } from '../lifecycle/retain-text.js';

/** Throws an `OptionError` naming `where` unless `value` is a `retainText` (or absent). */
export function assertRetainText(where: string, value: unknown): void {
  try {
    readRetainText(value);
  } catch (error) {
    if (error instanceof RetainTextProblem) throw new OptionError(`${where}: ${error.message}`);
    throw error;
  }
}

/**
 * The policy a message of `profile` and `principal` keeps: the profile's `retainText`, else
 * the principal's; `undefined` for `always`. One a host's resolver or verifier returned that
 * cannot be read is a 500 with a `RETAIN_TEXT_RESULT` error event: a text its sender asked not
 * to keep is never kept for want of reading the ask.
 */
export function retentionOf(profile: { code: string; retainText?: unknown }, principal: { id: string; retainText?: unknown }): TextRetention | undefined {
  const [given, from] = profile.retainText !== undefined ? [profile.retainText, `profile ${profile.code}`] : [principal.retainText, `principal ${principal.id}`];
  try {
    return readRetainText(given);
  } catch (error) {
    if (error instanceof RetainTextProblem) throw new EventError('RETAIN_TEXT_RESULT', `${from}: ${error.message}`);
    throw error;
  }
}

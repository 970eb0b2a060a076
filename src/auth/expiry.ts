/**
 * A key's `expiresAt`: the moment from which it is refused with 401 `KEY_EXPIRED`, given as
 * a `Date`, epoch milliseconds, or an RFC 3339 date-time with its offset
 * (`2027-01-31T00:00:00Z`), so that a table written in JSON or YAML needs no code.
 */
import { parseRfc3339 } from '../util/rfc3339.js';
import { describeType } from '../util/adapter-check.js';

/** What `expiresAt` may be given as. */
export type ExpiresAt = Date | number | string;

/** An `expiresAt` that cannot be read, with the reason; the caller words the error. */
export class ExpiresAtProblem extends Error {
  override name = 'ExpiresAtProblem';
}

/**
 * `expiresAt` as epoch ms.
 *
 * @throws ExpiresAtProblem for an invalid `Date`, a number that is not finite, a string that is
 *   not an RFC 3339 date-time with an offset (a time without one would be read in the
 *   server's zone, which the host may not have meant), or anything else.
 */
export function readExpiresAt(value: unknown): number {
  let at = Number.NaN;
  if (value instanceof Date) at = value.getTime();
  else if (typeof value === 'number') at = value;
  else if (typeof value === 'string') at = parseRfc3339(value);
  else throw new ExpiresAtProblem(`expiresAt must be a Date, epoch milliseconds or an RFC 3339 date-time, got ${describeType(value)}`);
  if (!Number.isFinite(at)) {
    throw new ExpiresAtProblem(`expiresAt ${JSON.stringify(value) ?? String(value)} is not a valid time; write an RFC 3339 date-time with its offset, such as '2027-01-31T00:00:00Z'`);
  }
  return at;
}

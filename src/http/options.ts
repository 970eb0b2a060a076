/**
 * The request path's options: what the router does with an unexpected error.
 */
import { OptionError } from '../errors.js';
import { describeType } from '../util/adapter-check.js';

/**
 * Who answers a request that failed unexpectedly (a storage that threw, a bug), never a
 * refusal of the registry, which the router always answers itself:
 *
 * - `'answer'`: the router answers `500 { "details": "500 server-error", "code": "SERVER_ERROR" }`.
 * - `'next'`: the router answers nothing and passes the error to `next(error)`, so the host's
 *   error middleware (and an APM agent hooked into it) sees it and answers.
 *
 * The `error` event hears of it either way.
 */
export type ServerErrorsOption = 'answer' | 'next';

/**
 * `'answer'`: a client gets the registry's JSON whatever the host has mounted. A host
 * without error middleware of its own would otherwise answer with Express's default page
 * (HTML, with the stack trace outside production).
 */
export const SERVER_ERRORS_DEFAULT: ServerErrorsOption = 'answer';

/** Checks the `serverErrors` option and fills its default. */
export function resolveServerErrors(given: unknown): ServerErrorsOption {
  if (given === undefined) return SERVER_ERRORS_DEFAULT;
  if (given === 'answer' || given === 'next') return given;
  const got = typeof given === 'string' ? `"${given}"` : describeType(given);
  throw new OptionError(`createSmsRouter: \`serverErrors\` must be 'answer' or 'next', got ${got}`);
}

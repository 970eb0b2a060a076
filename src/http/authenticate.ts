/**
 * Authentication: `X-API-Key` -> principal, before anything else is read from the request.
 */
import type { RequestHandler } from 'express';
import { EventError, SmsError } from '../errors.js';
import { settle } from '../util/settle.js';
import { hasScope, type KeyVerifier, type Principal, type Scope } from '../auth/principal.js';
import { describeType } from '../util/adapter-check.js';

/** The principal of an authenticated request, as the later stages read it. */
export function principalOf(res: { locals: Record<string, unknown> }): Principal {
  return res.locals.smsPrincipal as Principal;
}

/**
 * Returns middleware that verifies the key and, if `scope` is given, that the principal
 * may use it. 401 for a missing or unknown key, 403 for a disabled key or a missing scope.
 */
export function authenticate(verifyKey: KeyVerifier, scope: Scope | null): RequestHandler {
  const missing = new SmsError('MISSING_API_KEY');
  const invalid = new SmsError('INVALID_API_KEY');
  const disabled = new SmsError('KEY_DISABLED');
  const denied = new SmsError('SCOPE_DENIED', `API key may not use the ${scope ?? ''} endpoint`);
  return (req, res, next) => {
    // Node lower-cases header names, so `X-Api-Key` and `x-api-key` both arrive here.
    const key = req.headers['x-api-key'];
    if (typeof key !== 'string' || key === '') {
      next(missing);
      return;
    }
    const decide = (principal: Principal | null | undefined): void => {
      if (principal === null || principal === undefined) next(invalid);
      else if (!isPrincipal(principal)) next(notAPrincipal(principal));
      else if (principal.disabled === true) next(disabled);
      else if (scope !== null && !hasScope(principal, scope)) next(denied);
      else {
        res.locals.smsPrincipal = principal;
        next();
      }
    };
    // A synchronous verifier (staticKeys) is answered in the same turn.
    settle(verifyKey(key), decide, next);
  };
}

/** True for what a verifier may return for a valid key: an object with a non-empty string `id`. */
function isPrincipal(value: unknown): value is Principal {
  if (typeof value !== 'object' || value === null) return false;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' && id !== '';
}

/**
 * The error for a verifier that returned neither a principal nor `null`. It is the host's
 * bug, not the caller's: answered 500 (the error handler reports it through the `error`
 * event), rather than letting a string or an id-less object pass as a principal and end in
 * a misleading 422 "Invalid Profile Code". The message names the type of what came back,
 * never its value, which may hold the key or a secret.
 */
function notAPrincipal(value: unknown): Error {
  let what = describeType(value);
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const id = (value as { id?: unknown }).id;
    what += id === undefined ? ' without an `id`' : ` whose \`id\` is ${id === '' ? 'empty' : describeType(id)}`;
  }
  return new EventError(
    'VERIFY_KEY_RESULT',
    `verifyKey returned ${what}; it must return a Principal (an object with a non-empty string \`id\`) or null`,
  );
}

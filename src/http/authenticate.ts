/**
 * Authentication: `X-API-Key` -> principal, before anything else is read from the request.
 */
import type { RequestHandler } from 'express';
import { SmsError } from '../errors.js';
import { settle } from '../util/settle.js';
import { hasScope, type KeyVerifier, type Principal, type Scope } from '../auth/principal.js';

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

/**
 * Authentication: `X-API-Key` -> principal, before anything else is read from the request;
 * then what the principal's key may do: until when (`expiresAt`), from where (`allowedIps`)
 * and which routes (`scopes`).
 */
import type { Request, RequestHandler } from 'express';
import { EventError, SmsError } from '../errors.js';
import { settle } from '../util/settle.js';
import type { KeyVerifier, Principal } from '../auth/principal.js';
import { KeyGuardsProblem, keyGuardsOf, type KeyGuards } from '../auth/key-guards.js';
import { grants } from '../auth/scopes.js';
import type { EndpointName, RoutePermission } from '../endpoints.js';
import type { Emit } from '../observe/events.js';
import { requestIdOf } from '../observe/request-id.js';
import { describeType } from '../util/adapter-check.js';

/** The principal of an authenticated request, as the later stages read it. */
export function principalOf(res: { locals: Record<string, unknown> }): Principal {
  return res.locals.smsPrincipal as Principal;
}

/**
 * Where a refusal after the key was verified keeps the key's owner, for the
 * `request.rejected` event; `smsPrincipal` stays the mark of an authenticated request.
 */
export const REFUSED_PRINCIPAL = 'smsRefusedPrincipal';

/**
 * The refusal of each permission a route needs. The send permissions keep the code and the
 * texts of 0.1.0 (`SCOPE_DENIED`, naming the endpoint), which clients already match; the
 * others name the permission in their code.
 */
const REFUSALS: Readonly<Record<RoutePermission, SmsError>> = {
  'send:quick': new SmsError('SCOPE_DENIED', 'API key may not use the quick endpoint'),
  'send:premium': new SmsError('SCOPE_DENIED', 'API key may not use the premium endpoint'),
  read: new SmsError('READ_SCOPE_DENIED'),
  cancel: new SmsError('CANCEL_SCOPE_DENIED'),
  preview: new SmsError('PREVIEW_SCOPE_DENIED'),
  callbacks: new SmsError('CALLBACKS_SCOPE_DENIED'),
};

/** The route a key check guards. */
export interface GuardedRoute {
  /** Its endpoint name, for the `key.expired` event. */
  endpoint: EndpointName;
  /** The permission it needs. */
  scope: RoutePermission;
}

/**
 * Returns middleware that verifies the key and what its principal may do on `route`, in this
 * order: 401 for a missing or unknown key, 403 `KEY_DISABLED`, 401 `KEY_EXPIRED` (with a
 * `key.expired` event) once the clock `now` reaches its `expiresAt`, 403 `IP_NOT_ALLOWED`
 * for an address outside its `allowedIps`, 403 for a missing permission.
 */
export function authenticate(verifyKey: KeyVerifier, route: GuardedRoute, now: () => number, emit: Emit): RequestHandler {
  const missing = new SmsError('MISSING_API_KEY');
  const invalid = new SmsError('INVALID_API_KEY');
  const disabled = new SmsError('KEY_DISABLED');
  const expired = new SmsError('KEY_EXPIRED');
  const elsewhere = new SmsError('IP_NOT_ALLOWED');
  const denied = REFUSALS[route.scope];
  /** The refusal of a verified key on this route, or `null` when it may go on. */
  const refusalOf = (req: Request, principal: Principal, guards: KeyGuards): SmsError | null => {
    if (principal.disabled === true) return disabled;
    if (guards.expiresAt !== null && now() >= guards.expiresAt) {
      emit('key.expired', { principalId: principal.id, expiresAt: guards.expiresAt, endpoint: route.endpoint, ip: req.ip, requestId: requestIdOf(req) });
      return expired;
    }
    if (guards.allowsAddress !== null && !guards.allowsAddress(req.ip)) return elsewhere;
    return grants(guards.granted, route.scope) ? null : denied;
  };
  return (req, res, next) => {
    // Node lower-cases header names, so `X-Api-Key` and `x-api-key` both arrive here.
    const key = req.headers['x-api-key'];
    if (typeof key !== 'string' || key === '') {
      next(missing);
      return;
    }
    const decide = (principal: Principal | null | undefined): void => {
      if (principal === null || principal === undefined) {
        next(invalid);
        return;
      }
      if (!isPrincipal(principal)) {
        next(notAPrincipal(principal));
        return;
      }
      let guards: KeyGuards;
      try {
        guards = keyGuardsOf(principal);
      } catch (error) {
        next(error instanceof KeyGuardsProblem ? unreadablePrincipal(error) : error);
        return;
      }
      const refusal = refusalOf(req, principal, guards);
      if (refusal === null) {
        res.locals.smsPrincipal = principal;
        next();
        return;
      }
      res.locals[REFUSED_PRINCIPAL] = principal.id;
      next(refusal);
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

/**
 * The error for a principal whose `scopes`, `expiresAt`, `allowedIps`, `dailyUnits` or
 * `monthlyUnits` cannot be read: the
 * host's bug, answered 500 and reported like {@link notAPrincipal}, rather than guessing
 * what the host meant and letting the key through.
 */
function unreadablePrincipal(problem: KeyGuardsProblem): Error {
  return new EventError('VERIFY_KEY_RESULT', `verifyKey returned a principal whose ${problem.message}`);
}

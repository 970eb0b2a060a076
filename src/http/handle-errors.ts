/**
 * The router's error middleware: a known {@link SmsError} is answered with its status and
 * `{ "details": ..., "code": ... }`; anything else is reported through the `error` event,
 * never to the client, and answered exactly `500 { "details": "500 server-error", "code":
 * "SERVER_ERROR" }`, or passed to the host's `next(error)` with `serverErrors: 'next'`.
 */
import type { ErrorRequestHandler, Request } from 'express';
import { SmsError } from '../errors.js';
import type { Emit, RequestRejectedEvent } from '../observe/events.js';
import { requestIdOf } from '../observe/request-id.js';
import type { ServerErrorsOption } from './options.js';
import { sendError } from './respond.js';
import { REFUSED_PRINCIPAL } from './authenticate.js';

/**
 * True for the error Express raises when a path parameter is not valid percent-encoding
 * (`/delivery-status/%E0%A4%A`): a URIError with status 400, from Express 4's router and
 * Express 5's alike. It comes before authentication, from the client alone; such a path
 * names no message, so it is answered 404 rather than 500.
 */
function undecodablePath(error: unknown): boolean {
  return error instanceof URIError && (error as { status?: unknown }).status === 400;
}

/** Tells which endpoint a request was for, for the `request.rejected` event. */
export type EndpointOf = (req: Request) => RequestRejectedEvent['endpoint'];

/**
 * Returns the error middleware. `serverErrors` says who answers an unexpected error (see
 * {@link ServerErrorsOption}). It never calls `next()` without the error: the request was
 * the router's, and host middleware after it would run on an answered request.
 */
export function handleErrors(emit: Emit, endpointOf: EndpointOf, serverErrors: ServerErrorsOption): ErrorRequestHandler {
  const serverError = new SmsError('SERVER_ERROR');
  const notFound = new SmsError('NOT_FOUND');
  return (error: unknown, req, res, next) => {
    if (res.headersSent) {
      // The answer is out, so it cannot become an error answer; the host still hears of it.
      emit('error', { error, source: 'request', requestId: requestIdOf(req) });
      // Express asks every error middleware to check `headersSent`, so the host's own can
      // be given the error here too.
      if (serverErrors === 'next') next(error);
      // An answer cut short cannot be finished: the client must see it fail rather than wait.
      else if (!res.writableEnded) res.destroy();
      return;
    }
    const known = error instanceof SmsError ? error : undecodablePath(error) ? notFound : null;
    if (known === null) {
      if (serverErrors === 'answer') sendError(res, serverError);
      emit('error', { error, source: 'request', requestId: requestIdOf(req) });
      if (serverErrors === 'next') next(error);
      return;
    }
    if (known.status === 401) res.setHeader('WWW-Authenticate', 'ApiKey header="X-API-Key"');
    if (known.retryAfter !== undefined) res.setHeader('Retry-After', String(known.retryAfter));
    sendError(res, known);
    const principal = res.locals.smsPrincipal as { id: string } | undefined;
    emit('request.rejected', {
      status: known.status,
      details: known.details,
      endpoint: endpointOf(req),
      principalId: principal?.id ?? (res.locals[REFUSED_PRINCIPAL] as string | undefined) ?? null,
      ip: req.ip,
      requestId: requestIdOf(req),
    });
  };
}

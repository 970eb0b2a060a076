/**
 * The router's error middleware: every failure becomes `{ "details": ..., "code": ... }`. A
 * known {@link SmsError} is answered with its status and code; anything else is answered
 * exactly `500 { "details": "500 server-error", "code": "SERVER_ERROR" }` and reported
 * through the `error` event, never to the client.
 */
import type { ErrorRequestHandler, Request } from 'express';
import { SmsError } from '../errors.js';
import type { Emit, RequestRejectedEvent } from '../observe/events.js';
import { requestIdOf } from '../observe/request-id.js';
import { sendError } from './respond.js';

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

/** Returns the error middleware. */
export function handleErrors(emit: Emit, endpointOf: EndpointOf): ErrorRequestHandler {
  const serverError = new SmsError('SERVER_ERROR');
  const notFound = new SmsError('NOT_FOUND');
  return (error: unknown, req, res, next) => {
    if (res.headersSent) {
      // The answer is out; all that is left is to tell the host.
      emit('error', { error, source: 'request', requestId: requestIdOf(req) });
      next();
      return;
    }
    const known = error instanceof SmsError ? error : undecodablePath(error) ? notFound : null;
    const answer = known ?? serverError;
    if (answer.status === 401) res.setHeader('WWW-Authenticate', 'ApiKey header="X-API-Key"');
    if (answer.retryAfter !== undefined) res.setHeader('Retry-After', String(answer.retryAfter));
    sendError(res, answer);
    if (known === null) {
      emit('error', { error, source: 'request', requestId: requestIdOf(req) });
      return;
    }
    const principal = res.locals.smsPrincipal as { id: string } | undefined;
    emit('request.rejected', {
      status: answer.status,
      details: answer.details,
      endpoint: endpointOf(req),
      principalId: principal?.id ?? null,
      ip: req.ip,
      requestId: requestIdOf(req),
    });
  };
}

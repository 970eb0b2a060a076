/**
 * The answer for a path the router owns asked with a method it does not serve: 405
 * `METHOD_NOT_ALLOWED` with `Allow`, so a client learns its mistake in the router's JSON
 * rather than from the host's HTML 404.
 */
import type { RequestHandler } from 'express';
import type { EndpointRoute } from '../endpoints.js';
import { SmsError } from '../errors.js';

/** A method a route of the router answers. */
type Method = EndpointRoute['method'];

/**
 * Returns the handler mounted (with `all`) after a path's own routes; only methods those
 * routes did not take reach it. `methods` are the ones the routes answer: `['POST']`,
 * `['DELETE']`, or `['GET']` (Express answers HEAD with the GET route, so HEAD is listed with it).
 *
 * OPTIONS is answered here, 204 with `Allow` and no body, before authentication: a CORS
 * preflight carries no API key, and a host that wants CORS mounts its CORS middleware
 * before the router, which then answers the preflight itself. OPTIONS is listed in `Allow`
 * because this answers it.
 */
export function methodNotAllowed(methods: readonly Method[]): RequestHandler {
  const allowed = methods.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method]));
  const allow = [...allowed, 'OPTIONS'].join(', ');
  const refused = new SmsError('METHOD_NOT_ALLOWED', `Method not allowed here; use ${methods.join(' or ')}`);
  return (req, res, next) => {
    res.setHeader('Allow', allow);
    if (req.method === 'OPTIONS') {
      res.statusCode = 204;
      res.end();
      return;
    }
    next(refused);
  };
}

/**
 * The methods each path answers, from the routes served (rows of `ENDPOINTS`), in their
 * order: one `methodNotAllowed` per path, so a path two routes share lists both in `Allow`.
 */
export function methodsByPath(routes: readonly Pick<EndpointRoute, 'method' | 'path'>[]): Map<string, Method[]> {
  const byPath = new Map<string, Method[]>();
  for (const { path, method } of routes) {
    const methods = byPath.get(path) ?? [];
    if (!methods.includes(method)) methods.push(method);
    byPath.set(path, methods);
  }
  return byPath;
}

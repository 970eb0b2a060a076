/**
 * `hostCaseRoutes`: the router's routes matched as the host app matches its own, case-
 * sensitively only when the app has `case sensitive routing` enabled (Express's default is
 * off, so `/API/outbox/create` is the same path as `/api/outbox/create`).
 *
 * An Express Router fixes its case rule when it is made, and the router is made before it
 * is mounted, when the app is not known yet; the setting is also the app's to change later.
 * So the routes are registered on two Routers, one of each rule, and each request is
 * dispatched by the setting of the app it arrived through (`req.app`, a mounted sub-app
 * included). Trailing slashes are left to Express's default (`/create/` is `/create`).
 */
import express, { type ErrorRequestHandler, type Request, type RequestHandler } from 'express';

/** A route path, or several with the same handler. */
type RoutePath = string | string[];

/** The routes, as one Express handler, with the registration methods the router uses. */
export interface HostCaseRoutes extends RequestHandler {
  /** Adds a GET (and so HEAD) route. */
  get(path: RoutePath, handler: RequestHandler): HostCaseRoutes;
  /** Adds a POST route. */
  post(path: RoutePath, handler: RequestHandler): HostCaseRoutes;
  /** Adds a DELETE route. */
  delete(path: RoutePath, handler: RequestHandler): HostCaseRoutes;
  /** Adds a route for every method. */
  all(path: RoutePath, handler: RequestHandler): HostCaseRoutes;
  /** Adds error middleware after the routes, or a handler mounted at `path` (a carrier's own routes). */
  use(handler: ErrorRequestHandler): HostCaseRoutes;
  use(path: string, handler: RequestHandler): HostCaseRoutes;
}

/** Whether the app a request arrived through matches paths case-sensitively. */
function caseSensitive(req: Request): boolean {
  // Without an app (the router called as plain middleware), Express's default.
  return req.app?.enabled('case sensitive routing') === true;
}

/** Creates the routes; see the file comment. */
export function hostCaseRoutes(): HostCaseRoutes {
  const sensitive = express.Router({ strict: false, caseSensitive: true });
  const insensitive = express.Router({ strict: false, caseSensitive: false });
  const routes = ((req, res, next) => (caseSensitive(req) ? sensitive : insensitive)(req, res, next)) as HostCaseRoutes;
  for (const method of ['get', 'post', 'delete', 'all'] as const) {
    routes[method] = (path, handler) => {
      sensitive[method](path, handler);
      insensitive[method](path, handler);
      return routes;
    };
  }
  routes.use = (...args: [ErrorRequestHandler] | [string, RequestHandler]) => {
    if (args.length === 1) {
      sensitive.use(args[0]);
      insensitive.use(args[0]);
    } else {
      sensitive.use(args[0], args[1]);
      insensitive.use(args[0], args[1]);
    }
    return routes;
  };
  return routes;
}

/**
 * The one table of the router's endpoints. Each row is one route under the base path; the
 * router mounts a route and its 405 from it, the `request.rejected` event and the metric
 * labels take their endpoint names from it, and the OpenAPI document describes the same
 * rows. It is plain data at the bottom of the house so that every layer can read it: a new
 * endpoint is a row here, its handler, its entry in the router's handler map and its
 * description in the OpenAPI paths, each of which the type checker asks for once the row
 * exists.
 *
 * @module
 */

/**
 * What a key must be granted to use a route (a principal's `scopes`, docs/keys.md): send
 * through one endpoint, read messages, cancel them, preview a send, or replay delivery reports.
 */
export type Permission = 'send:quick' | 'send:premium' | 'read' | 'cancel' | 'preview' | 'callbacks';

/** One route of the send API. */
export interface EndpointRoute {
  /**
   * The endpoint's name in events, logs and metric labels. Several routes may share one
   * (the two lookups of `status`).
   */
  readonly endpoint: string;
  /** The one method the route answers; the others get 405 with `Allow`. */
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** The path under the base path, in Express's syntax (`:param`). */
  readonly path: string;
  /** The OpenAPI operation's id; the router's handlers and the document's operations are keyed by it. */
  readonly operationId: string;
  /** The permission a key needs for the route; a key without it is answered 403. */
  readonly scope: Permission;
  /** `true` on the routes that store messages: their endpoint names are the messages' `endpoint`. */
  readonly sends: boolean;
}

/**
 * Every route of the send API, in the order the router mounts them. The OpenAPI document
 * at `<basePath>/openapi.json` is not a row: it describes these, and needs no key.
 */
export const ENDPOINTS = [
  { endpoint: 'quick', method: 'POST', path: '/create', operationId: 'quickSend', scope: 'send:quick', sends: true },
  { endpoint: 'premium', method: 'POST', path: '/premium', operationId: 'premiumSend', scope: 'send:premium', sends: true },
  { endpoint: 'preview', method: 'POST', path: '/create/preview', operationId: 'quickPreview', scope: 'preview', sends: false },
  { endpoint: 'preview', method: 'POST', path: '/premium/preview', operationId: 'premiumPreview', scope: 'preview', sends: false },
  { endpoint: 'status', method: 'GET', path: '/delivery-status/:message_ref', operationId: 'getDeliveryStatus', scope: 'read', sends: false },
  { endpoint: 'status', method: 'GET', path: '/delivery-status', operationId: 'findByExternalId', scope: 'read', sends: false },
  { endpoint: 'list', method: 'GET', path: '/messages', operationId: 'listMessages', scope: 'read', sends: false },
  { endpoint: 'reports', method: 'GET', path: '/reports', operationId: 'pullReports', scope: 'read', sends: false },
  { endpoint: 'callbacks', method: 'GET', path: '/callbacks', operationId: 'listCallbacks', scope: 'read', sends: false },
  { endpoint: 'callbacks', method: 'POST', path: '/callbacks/replay', operationId: 'replayCallbacks', scope: 'callbacks', sends: false },
  { endpoint: 'cancel', method: 'DELETE', path: '/messages/:message_ref', operationId: 'cancelMessage', scope: 'cancel', sends: false },
  { endpoint: 'cancel', method: 'DELETE', path: '/messages', operationId: 'cancelByExternalId', scope: 'cancel', sends: false },
] as const satisfies readonly EndpointRoute[];

/** A row of {@link ENDPOINTS}. */
export type EndpointRow = (typeof ENDPOINTS)[number];

/** An endpoint's name: `quick`, `premium`, `preview`, `status` or `cancel`. */
export type EndpointName = EndpointRow['endpoint'];

/** The name of an endpoint that stores messages: `quick` or `premium`. */
export type SendEndpointName = Extract<EndpointRow, { sends: true }>['endpoint'];

/** A permission some route needs: each has its refusal (`http/authenticate.ts`). */
export type RoutePermission = EndpointRow['scope'];

/** A route's OpenAPI operation id, the key of its handler and of its description. */
export type OperationId = EndpointRow['operationId'];

/** Every endpoint name once, in table order. */
export const ENDPOINT_NAMES: readonly EndpointName[] = [...new Set(ENDPOINTS.map((row) => row.endpoint))];

/** The names of the endpoints that store messages, in table order. */
export const SEND_ENDPOINT_NAMES: readonly SendEndpointName[] = [
  ...new Set(ENDPOINTS.filter((row): row is Extract<EndpointRow, { sends: true }> => row.sends).map((row) => row.endpoint)),
];

/** The literal start of a route's path, before its first parameter: `/delivery-status` of `/delivery-status/:message_ref`. */
function staticPrefix(path: string): string {
  const param = path.indexOf('/:');
  return param === -1 ? path : path.slice(0, param);
}

// Longest first: `/create/preview` is the preview's, not the quick send's.
const PREFIXES = ENDPOINTS.map((row) => ({ prefix: staticPrefix(row.path), exact: !row.path.includes('/:'), method: row.method as string, endpoint: row.endpoint })).sort(
  (a, b) => b.prefix.length - a.prefix.length,
);

/**
 * The endpoint a path under the base path belongs to (`/delivery-status/abc` -> `status`,
 * `/create/preview` -> `preview`), or `null` for a path of none. Where routes of two
 * endpoints share a path (`GET /messages` lists, `DELETE /messages` cancels), the one of
 * `method` when given and one of them answers it, else the first in the table.
 */
export function endpointAt(path: string, method?: string): EndpointName | null {
  let loose: EndpointName | null = null;
  let routed: EndpointName | null = null;
  for (const { prefix, exact, method: routeMethod, endpoint } of PREFIXES) {
    if (path !== prefix && !path.startsWith(`${prefix}/`)) continue;
    loose ??= endpoint;
    // A route of this path: its method's first, else the first route of the path.
    if (path !== prefix && exact) continue;
    if (method === undefined || routeMethod === method.toUpperCase()) return endpoint;
    routed ??= endpoint;
  }
  return routed ?? loose;
}

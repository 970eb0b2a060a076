/**
 * The HTTP server metric of the `metrics` option: how long the router's own routes take to
 * answer, by method, route template and status code, named after OpenTelemetry's HTTP
 * semantic conventions (`http.server.request.duration` and its attributes) as Prometheus
 * writes them. Requests the router does not own (the host's routes) are never observed.
 */
import type { RequestHandler, Response } from 'express';
import { metric } from './metrics.js';
import type { MetricsConfig } from './options.js';

/** The histogram's full name: OpenTelemetry's `http.server.request.duration`, under the package's prefix. */
export const REQUEST_DURATION_METRIC = 'sms_outbox_http_server_request_duration_seconds';

/** Its label names: the OpenTelemetry attribute names with `_` for `.`. */
const LABELS = ['http_request_method', 'http_route', 'http_response_status_code'] as const;

/** OpenTelemetry's advised bucket bounds for `http.server.request.duration`, seconds. */
export const REQUEST_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/**
 * The methods that keep their own name in `http_request_method`; any other is `_OTHER`, as
 * the conventions ask, so a client inventing methods cannot add series.
 */
const KNOWN_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']);

/** Wraps the handler of one route so that its answers are observed under `route`, its template. */
export type TimeRoute = (route: string, handler: RequestHandler) => RequestHandler;

/**
 * Registers the request duration histogram and returns the wrapper that times a route.
 * Timing starts when the route matches and ends when the answer is handed to the socket
 * (`finish`); an answer cut short after its head was sent is observed when the socket
 * closes, with the status it began with, and a request that got no answer at all is not
 * observed (there is no status to label it with). The count of the histogram
 * (`_count`) is the request counter: a counter of its own would repeat it series for series.
 */
export function requestTimer(config: MetricsConfig): TimeRoute {
  const duration = metric(
    config.registry,
    {
      name: REQUEST_DURATION_METRIC,
      help: 'Duration of the answers of the router\u2019s own routes, by method, route template and status code (OpenTelemetry http.server.request.duration).',
      labelNames: LABELS,
      registers: [],
      buckets: REQUEST_DURATION_BUCKETS,
    },
    config.client.Histogram,
  );
  // A request that falls from one of the router's routes to another (an error handled
  // further on) is timed by the first only.
  const timed = new WeakSet<Response>();
  return (route, handler) => (req, res, next) => {
    if (!timed.has(res)) {
      timed.add(res);
      const started = performance.now();
      const observe = (): void => {
        res.off('finish', observe);
        res.off('close', observe);
        if (!res.headersSent) return;
        duration.observe(
          {
            http_request_method: KNOWN_METHODS.has(req.method) ? req.method : '_OTHER',
            http_route: route,
            http_response_status_code: String(res.statusCode),
          },
          (performance.now() - started) / 1000,
        );
      };
      res.on('finish', observe);
      res.on('close', observe);
    }
    return handler(req, res, next);
  };
}

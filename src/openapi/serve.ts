/**
 * `GET <basePath>/openapi.json`: the router's own OpenAPI document, with the paths as
 * clients see them wherever the host mounted the router.
 */
import type { RequestHandler } from 'express';
import { sendJsonText } from '../http/respond.js';
import { buildOpenApiDocument, type OpenApiDocumentOptions } from './document.js';

/** Mount points remembered; a mount path with parameters could otherwise grow the cache without end. */
const MAX_CACHED = 16;

/**
 * Returns the handler that serves the document, built from `options` (the router's limits,
 * rate-limit headers, server and info), of a router whose routes sit under `routerBase`
 * (its `basePath` option). It needs no API key: the document holds nothing secret. Each
 * serialised document is built once per mount point.
 */
export function serveOpenApi(options: Omit<OpenApiDocumentOptions, 'basePath'>, routerBase: string): RequestHandler {
  const cache = new Map<string, string>();
  return (req, res) => {
    // `baseUrl` is where the host mounted the router; the router's own base path follows it.
    const basePath = `${req.baseUrl}${routerBase}`;
    let body = cache.get(basePath);
    if (body === undefined) {
      body = JSON.stringify(buildOpenApiDocument({ ...options, basePath }));
      if (cache.size < MAX_CACHED) cache.set(basePath, body);
    }
    res.setHeader('Cache-Control', 'no-cache');
    sendJsonText(res, 200, body);
  };
}

/**
 * `buildOpenApiDocument`: the OpenAPI 3.1 description of the send API, generated from the
 * same JSON Schemas the request validators are compiled from (`http/schemas.ts`), so the
 * document cannot drift from what the router accepts. This file assembles the document;
 * its parts are built beside it: the component schemas (schemas.ts), the error answers
 * (responses.ts), the endpoints (paths.ts) and the delivery report (webhooks.ts).
 *
 * @module
 */
import { LIMIT_DEFAULTS, type LimitOptions } from '../http/limits.js';
import { apiPaths } from './paths.js';
import { componentResponses } from './responses.js';
import { componentSchemas } from './schemas.js';
import { WEBHOOKS } from './webhooks.js';

/** Options of {@link buildOpenApiDocument}. All optional. */
export interface OpenApiDocumentOptions {
  /**
   * The path prefix of the endpoints as clients see them: the mount point and the router's
   * `basePath` together (e.g. `/sms/api/outbox`). Default `/api/outbox`.
   */
  basePath?: string;
  /** The router's `limits`, so the stated bounds match. Default: the router's defaults. */
  limits?: LimitOptions;
  /** Absolute URL of the server, written to `servers`. Default: none (the document's own origin). */
  serverUrl?: string;
  /** Overrides of the `info` object (title, version, description). */
  info?: { title?: string; version?: string; description?: string };
}

/** An OpenAPI 3.1 document, as plain JSON-serialisable data. */
export interface OpenApiDocument {
  /** Always `3.1.0`. */
  openapi: '3.1.0';
  /** Title, version and description. */
  info: { title: string; version: string; description?: string };
  /** The server, when `serverUrl` was given. */
  servers?: { url: string }[];
  /** The default security requirement (the API key). */
  security: Record<string, string[]>[];
  /** The four endpoints. */
  paths: Record<string, unknown>;
  /** The delivery report the service POSTs to `dlr_callback_url`. */
  webhooks: Record<string, unknown>;
  /** Shared schemas, responses, parameters and the security scheme. */
  components: Record<string, Record<string, unknown>>;
}

/**
 * Builds the OpenAPI 3.1 document of the send API: both send endpoints (premium as a
 * `oneOf` of its two forms), the status endpoints, every error answer with examples, the
 * `X-API-Key` security scheme and the delivery report as a webhook.
 *
 * The request schemas are the validators' own, so pass the router's `limits` to state the
 * same bounds. The router serves this document at `<basePath>/openapi.json` (see the
 * `openapi` option), with `basePath` set to where it is mounted. A new object every call.
 */
export function buildOpenApiDocument(options: OpenApiDocumentOptions = {}): OpenApiDocument {
  const limits = { ...LIMIT_DEFAULTS, ...options.limits };
  const basePath = (options.basePath ?? '/api/outbox').replace(/\/+$/, '');
  // Cloned so a caller (or a validator that dereferences in place) may change the result
  // without touching the shared constants and schemas it is built from.
  return structuredClone<OpenApiDocument>({
    openapi: '3.1.0',
    info: {
      title: options.info?.title ?? 'SMS send API',
      version: options.info?.version ?? '1.0.0',
      description:
        options.info?.description ??
        'Send SMS through the quick and premium endpoints, query delivery status, and receive delivery reports. ' +
          `Numbers are digits in international format, country code first, no plus sign. A message may need at most ${limits.maxSegments} SMS units; ` +
          `a request may carry at most ${limits.maxMessagesPerRequest} messages and ${limits.maxBodyBytes} bytes.`,
    },
    ...(options.serverUrl === undefined ? {} : { servers: [{ url: options.serverUrl }] }),
    security: [{ ApiKey: [] }],
    paths: apiPaths(basePath),
    webhooks: WEBHOOKS,
    components: {
      schemas: componentSchemas(limits),
      responses: componentResponses(limits),
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The key the operator issued you.' },
      },
    },
  });
}

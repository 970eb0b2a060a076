/**
 * `buildOpenApiDocument`: the OpenAPI 3.1 description of the send API, generated from the
 * same JSON Schemas the request validators are compiled from (`http/schemas.ts`), so the
 * document cannot drift from what the router accepts. This file assembles the document;
 * its parts are built beside it: the component schemas (schemas.ts), the error answers
 * (responses.ts), the endpoints (paths.ts) and the delivery report (webhooks.ts).
 *
 * @module
 */
import { LIMIT_DEFAULTS, type LimitOptions } from '../http/options.js';
import type { RateLimitHeaders } from '../http/rate-limit/options.js';
import { apiPaths, TAGS } from './paths.js';
import { componentResponses } from './responses.js';
import { componentSchemas } from './schemas.js';
import { CALLBACK_SCHEMAS } from './callbacks-path.js';
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
  /**
   * Where clients reach the host, written to `servers`: an absolute URL of its origin (e.g.
   * `https://sms.example.com`), or a path prefix in front of `basePath` a proxy adds. The
   * paths already carry `basePath`, so it must not repeat it. A trailing `/` is dropped.
   * Default `/`: the origin the document was fetched from.
   */
  serverUrl?: string;
  /** Overrides of the `info` object (title, version, description, contact). */
  info?: { title?: string; version?: string; description?: string; contact?: OpenApiContact };
  /**
   * The router's `rateLimit.headers`: with `'always'` every answer given after
   * authentication may carry the `RateLimit` headers, and the document says so. Default
   * `'refused'`: only the 429s of a limit carry them.
   */
  rateLimitHeaders?: RateLimitHeaders;
}

/** Who a client of the API asks about it: the document's `info.contact`. */
export interface OpenApiContact {
  /** A person or team. */
  name?: string;
  /** A page (an absolute URL). */
  url?: string;
  /** An email address. */
  email?: string;
}

/**
 * The default `info.contact`: the document describes the operator's gateway, whose contact
 * the package cannot know, so it points a client to whoever issued its key.
 */
export const DEFAULT_CONTACT: OpenApiContact = { name: 'The operator of this gateway, who issued your API key' };

/** An OpenAPI 3.1 document, as plain JSON-serialisable data. */
export interface OpenApiDocument {
  /** Always `3.1.0`. */
  openapi: '3.1.0';
  /** Title, version, description, contact and license. */
  info: { title: string; version: string; description?: string; contact: OpenApiContact; license: { name: string; identifier: string } };
  /** The server: `serverUrl`, or `/` (the document's own origin). */
  servers: { url: string; description: string }[];
  /** The tags the operations are grouped under: `Send`, `Status`, `Cancel`. */
  tags: { name: string; description: string }[];
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
  const rateLimit = options.rateLimitHeaders ?? 'refused';
  const serverUrl = options.serverUrl?.replace(/\/+$/, '') || '/';
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
      contact: options.info?.contact ?? DEFAULT_CONTACT,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [
      {
        url: serverUrl,
        description: serverUrl === '/' ? 'The host this document was fetched from.' : 'The SMS gateway.',
      },
    ],
    tags: [...TAGS],
    security: [{ ApiKey: [] }],
    paths: apiPaths(basePath, rateLimit),
    webhooks: WEBHOOKS,
    components: {
      schemas: { ...componentSchemas(limits), ...CALLBACK_SCHEMAS },
      responses: componentResponses(limits, rateLimit),
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The key the operator issued you.' },
      },
    },
  });
}

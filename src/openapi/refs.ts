/**
 * The small builders every part of the OpenAPI document uses: a `$ref` to a component, a
 * JSON media type, the example message id the examples share, and the headers several
 * answers carry. Kept apart so that the schemas, the responses, the paths and the webhook
 * each build their part the same way without importing one another.
 *
 * @module
 */
import type { RateLimitHeaders } from '../http/rate-limit/options.js';

/** A JSON Schema (or any OpenAPI object), as plain data. */
export type Schema = Record<string, unknown>;

/** A `$ref` to the component `name` of `kind` (`schemas`, `responses`). */
export const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** `content` as the `application/json` media type of a request or response. */
export const json = (content: Record<string, unknown>) => ({ 'application/json': content });

/** The `message_ref` every example shows, so that they read as one message. */
export const EXAMPLE_REF = '0193f1d2-8c4e-7a10-9b2f-4d5e6f708192';

/** A response header of `type`, `required` when every answer of that response carries it. */
export const header = (description: string, type: 'string' | 'integer', required = false) => ({
  description,
  ...(required ? { required: true } : {}),
  schema: type === 'integer' ? { type, minimum: 0 } : { type },
});

/**
 * The draft-8 rate-limit headers: `RateLimit` and `RateLimit-Policy`, one list item per
 * limit that counted the request. `required` on the answers that always carry them.
 */
export function rateLimitHeaders(required: boolean): Record<string, unknown> {
  return {
    RateLimit: {
      ...header(
        'Per limit that counted the request: `"<limit>"; r=<requests or messages left>; t=<seconds until the window resets>` (IETF RateLimit header fields, draft 8).',
        'string',
        required,
      ),
      example: '"requests"; r=0; t=42',
    },
    'RateLimit-Policy': {
      ...header(
        'Per limit that counted the request: `"<limit>"; q=<quota>; w=<window seconds>; pk=:<partition key>:` (draft 8).',
        'string',
        required,
      ),
      example: '"requests"; q=600; w=60; pk=:ZGYxMmM0OWJlNWEx:',
    },
  };
}

/**
 * The rate-limit headers every answer after authentication may carry: none with the
 * router's default `rateLimit.headers` (`'refused'`: only the 429s of a limit carry them),
 * both, optional, with `'always'`.
 */
export const pacingHeaders = (when: RateLimitHeaders): Record<string, unknown> => (when === 'always' ? rateLimitHeaders(false) : {});

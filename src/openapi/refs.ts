/**
 * The small builders every part of the OpenAPI document uses: a `$ref` to a component, a
 * JSON media type, and the example message id the examples share. Kept apart so that the
 * schemas, the responses, the paths and the webhook each build their part the same way
 * without importing one another.
 *
 * @module
 */

/** A JSON Schema (or any OpenAPI object), as plain data. */
export type Schema = Record<string, unknown>;

/** A `$ref` to the component `name` of `kind` (`schemas`, `responses`). */
export const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** `content` as the `application/json` media type of a request or response. */
export const json = (content: Record<string, unknown>) => ({ 'application/json': content });

/** The `message_ref` every example shows, so that they read as one message. */
export const EXAMPLE_REF = '6f1c2a9e-4b7d-4c1e-9a55-0b2f6d8e3c41';

/**
 * What the OpenAPI tests share: the document validated, resolved, its schemas compiled as
 * a 3.1 tool reads them, its operations listed, and Redocly's verdict on it.
 */
import { dereference, validate } from '@readme/openapi-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { buildOpenApiDocument, type OpenApiDocument } from '../../src/index.js';

// The document is walked by path and key; typing every level would only restate it.
export type Json = Record<string, any>;

/** Validates with the real OpenAPI 3.1 validator; it dereferences in place, so on a copy. */
export async function check(doc: OpenApiDocument) {
  return validate(structuredClone(doc) as never);
}

/** The document with every `$ref` replaced, for schema-by-schema checks. */
export async function resolved(doc: OpenApiDocument = buildOpenApiDocument()): Promise<Json> {
  return (await dereference(structuredClone(doc) as never)) as Json;
}

/** Compiles a schema of the document the way an OpenAPI 3.1 tool reads it (JSON Schema 2020-12). */
export function compile2020(schema: unknown) {
  const ajv = new Ajv2020({ strict: false, allowUnionTypes: true, validateFormats: false });
  return ajv.compile(schema as object);
}

/** The request validators' own Ajv settings, on the schemas of `http/schemas.ts`. */
export function compileRequestSchema(schema: object) {
  return new Ajv({ verbose: true, allowUnionTypes: true, strict: true }).compile(schema);
}


/** Redocly's `recommended` ruleset on `doc`: each problem as `severity rule: message at pointer`. */
export async function redoclyProblems(doc: OpenApiDocument): Promise<string[]> {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: JSON.stringify(doc, null, 2), absoluteRef: '/openapi.json', config });
  return problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`);
}

/** The send and status operations of a resolved document, by `METHOD path`. */
export function operations(doc: Json): [string, Json][] {
  return Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
    Object.entries<Json>(item).map(([method, operation]): [string, Json] => [`${method.toUpperCase()} ${path}`, operation]),
  );
}


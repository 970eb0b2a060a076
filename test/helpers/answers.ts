/**
 * Checks every answer a test's gateway gives against the OpenAPI document the router serves:
 * the status is one the document lists for that path and method, the declared required
 * headers are there, the `Content-Type` is a declared one, and the JSON body matches the
 * response schema (with ajv, as an OpenAPI 3.1 tool reads it: JSON Schema 2020-12).
 *
 * `recordAnswers` is Express middleware a test host mounts before the router (the test
 * helpers' `createGateway` does); it checks each answer as it is sent and keeps what does not
 * conform in {@link answerProblems}, which a setup file (`test/setup/answer-guard.ts`) turns
 * into a failure of the test during which it was given. Answers to paths the document does
 * not describe (the document itself, what falls through to the host) are not checked.
 *
 * Validators are compiled once per document and response, and kept for the whole test file.
 */
import type { RequestHandler } from 'express';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { buildOpenApiDocument, type OpenApiDocumentOptions } from '../../src/index.js';

// The document is walked by key; typing every level would only restate it.
type Json = Record<string, any>;

/** One answer as the client received it. */
export interface RecordedAnswer {
  method: string;
  /** The path and query as the client sent them. */
  url: string;
  status: number;
  /** Header names in lower case. */
  headers: Record<string, number | string | string[] | undefined>;
  /** The body as sent. */
  body: string;
}

/** Non-conforming answers, one line each, until the setup file takes them after each test. */
export const answerProblems: string[] = [];

/** How many answers were checked against a document (described ones only); tests of the check read it. */
export const answerStats = { checked: 0 };

/** Checks one answer; `null` when it conforms or its path is not described. */
export type AnswerCheck = (answer: RecordedAnswer) => string | null;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** An RFC 6901 JSON pointer of `segments`. */
function pointer(segments: readonly string[]): string {
  return segments.map((segment) => `/${segment.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

/** The object at `#/...` `ref` of `doc`, and the segments that lead there. */
function follow(doc: Json, value: Json, at: string[]): { value: Json; at: string[] } {
  if (typeof value.$ref !== 'string') return { value, at };
  const segments = (value.$ref as string).replace(/^#\//, '').split('/').map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  return follow(doc, segments.reduce<Json>((node, key) => node[key], doc), segments);
}

/** A path template of the document as a matcher of request paths (Express: a trailing `/` matches too). */
function matcher(template: string): RegExp {
  const pattern = template
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${pattern}/?$`);
}

function headerText(value: number | string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

/** The checker of one document: its path matchers, and a validator per response schema, compiled on first use. */
function checkerOf(doc: Json): AnswerCheck {
  const ajv = new Ajv2020({ strict: false, allowUnionTypes: true, allErrors: true });
  ajv.addFormat('uuid', UUID);
  ajv.addFormat('date-time', DATE_TIME);
  ajv.addSchema(doc, 'openapi');
  const validators = new Map<string, ValidateFunction>();
  const validatorAt = (at: string[]): ValidateFunction => {
    const key = pointer(at);
    let validate = validators.get(key);
    if (validate === undefined) {
      validate = ajv.compile({ $ref: `openapi#${key}` });
      validators.set(key, validate);
    }
    return validate;
  };
  const paths = Object.entries<Json>(doc.paths).map(([template, item]) => ({ template, item, match: matcher(template) }));

  return (answer) => {
    const path = answer.url.split('?')[0]!;
    const described = paths.find(({ match }) => match.test(path));
    if (described === undefined) return null;
    answerStats.checked += 1;
    const where = `${answer.method} ${answer.url} -> ${answer.status}`;
    const head = answer.method === 'HEAD';
    const method = head ? 'get' : answer.method.toLowerCase();
    let operation = described.item[method] as Json | undefined;
    let operationAt = ['paths', described.template, method];
    if (operation === undefined) {
      // Another method on a described path: its 405 is the one every operation of the path lists.
      if (answer.method === 'OPTIONS' && answer.status === 204) return null;
      const [other, listed] = Object.entries<Json>(described.item).find(([, op]) => op.responses?.['405'] !== undefined) ?? [];
      if (answer.status !== 405 || listed === undefined) return `${where}: ${described.template} has no ${answer.method} operation`;
      operation = listed;
      operationAt = ['paths', described.template, other!];
    }
    const responses = operation.responses as Json;
    const status = String(answer.status);
    const key = [status, `${status[0]}XX`, 'default'].find((candidate) => responses[candidate] !== undefined);
    if (key === undefined) return `${where}: status ${status} is not documented for ${method.toUpperCase()} ${described.template}`;
    const response = follow(doc, responses[key], [...operationAt, 'responses', key]);

    for (const [name, declared] of Object.entries<Json>(response.value.headers ?? {})) {
      const value = headerText(answer.headers[name.toLowerCase()]);
      if (value === undefined) {
        if (declared.required === true) return `${where}: required header ${name} is missing`;
        continue;
      }
      if (declared.schema?.type === 'integer' && !/^\d+$/.test(value)) return `${where}: header ${name} is not an integer: ${JSON.stringify(value)}`;
    }

    const content = response.value.content as Json | undefined;
    if (content === undefined || head) return null;
    const type = headerText(answer.headers['content-type'])?.split(';')[0]!.trim().toLowerCase();
    const media = Object.keys(content).find((candidate) => candidate === type);
    if (type === undefined || media === undefined) {
      return `${where}: Content-Type ${JSON.stringify(type ?? null)} is not one of ${Object.keys(content).join(', ')}`;
    }
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return `${where}: the body is not JSON: ${JSON.stringify(answer.body.slice(0, 200))}`;
    }
    const validate = validatorAt([...response.at, 'content', media, 'schema']);
    if (validate(body)) return null;
    const errors = (validate.errors ?? []).slice(0, 5).map((error) => `${error.instancePath || '/'} ${error.message}`);
    return `${where}: the body does not match the documented schema (${errors.join('; ')}): ${answer.body.slice(0, 300)}`;
  };
}

const checkers = new Map<string, AnswerCheck>();

/**
 * The check of answers against the document `buildOpenApiDocument(options)` builds. One
 * per distinct `options`, so each document's validators are compiled once.
 */
export function answerCheck(options: OpenApiDocumentOptions): AnswerCheck {
  const key = JSON.stringify(options);
  let check = checkers.get(key);
  if (check === undefined) {
    check = checkerOf(buildOpenApiDocument(options) as Json);
    checkers.set(key, check);
  }
  return check;
}

/**
 * Middleware for a test host, mounted before the router: checks each answer against the
 * document of `options` (its `basePath` is the full path prefix clients use: the mount point
 * and the router's base path) and records the ones that do not conform in
 * {@link answerProblems}. An answer the host gives itself is skipped when it sets
 * `res.locals.fellThrough = true`.
 */
export function recordAnswers(options: OpenApiDocumentOptions): RequestHandler {
  const check = answerCheck(options);
  return (req, res, next) => {
    const chunks: Buffer[] = [];
    const keep = (chunk: unknown, encoding: unknown): void => {
      if (typeof chunk === 'string') chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
      else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    res.write = ((...args: unknown[]) => {
      keep(args[0], args[1]);
      return write(...args);
    }) as typeof res.write;
    const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
    res.end = ((...args: unknown[]) => {
      if (typeof args[0] !== 'function') keep(args[0], args[1]);
      if (res.locals.fellThrough !== true) {
        const answer: RecordedAnswer = {
          method: req.method,
          url: req.originalUrl,
          status: res.statusCode,
          headers: res.getHeaders() as RecordedAnswer['headers'],
          body: Buffer.concat(chunks).toString('utf8'),
        };
        let problem: string | null;
        try {
          problem = check(answer);
        } catch (error) {
          problem = `${answer.method} ${answer.url} -> ${answer.status}: the check failed: ${String(error)}`;
        }
        if (problem !== null) answerProblems.push(problem);
      }
      return end(...args);
    }) as typeof res.end;
    next();
  };
}

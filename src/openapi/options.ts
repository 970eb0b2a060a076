/**
 * The `openapi` option (whether the router serves its OpenAPI document, and what the
 * document says beyond the routes) and its resolution into the options the document is
 * built from, checked once at construction.
 */
import type { LimitOptions } from '../http/options.js';
import type { RateLimitHeaders } from '../http/rate-limit/options.js';
import type { OpenApiDocumentOptions } from './document.js';
import { describeType } from '../util/adapter-check.js';
import { assertKnownKeys } from '../util/known-keys.js';
import { OptionError } from '../errors.js';

/** The router's `openapi` option, when it is an object: what the served document says beyond the routes. */
export interface OpenApiOptions {
  /**
   * Written to the document's `servers`: the absolute URL of the origin clients reach
   * (e.g. `https://sms.example.com`, when a proxy or another host name stands in front), or
   * a path prefix a proxy adds. Not the mount path: the paths carry it already.
   * Default `/`, the origin the document was fetched from.
   */
  serverUrl?: string;
  /** Overrides of the document's `info`: `title`, `version`, `description`, `contact` (`{ name?, url?, email? }`). */
  info?: OpenApiDocumentOptions['info'];
}

/** The served document's options: everything but the base path, which comes from each request's mount point. */
export type OpenApiConfig = Omit<OpenApiDocumentOptions, 'basePath'>;

const WHERE = 'createSmsRouter: `openapi`';

/** Throws unless `url` is an absolute http(s) URL without credentials, query or fragment, or a path. */
function assertServerUrl(url: unknown): asserts url is string {
  const where = `${WHERE}.serverUrl`;
  if (typeof url !== 'string') throw new OptionError(`${where} must be a string, got ${describeType(url)}`);
  if (url.startsWith('/')) {
    if (!/^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*\/?$/.test(url)) throw new OptionError(`${where} must be a URL path without query, got "${url}"`);
    return;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OptionError(`${where} must be an absolute http(s) URL (e.g. https://sms.example.com) or a path, got "${url}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new OptionError(`${where} must be an http or https URL, got "${url}"`);
  }
  if (parsed.username !== '' || parsed.password !== '' || parsed.search !== '' || parsed.hash !== '') {
    throw new OptionError(`${where} must have no credentials, query or fragment, got "${url}"`);
  }
}

function assertInfo(info: unknown): asserts info is OpenApiOptions['info'] {
  const where = `${WHERE}.info`;
  if (typeof info !== 'object' || info === null) throw new OptionError(`${where} must be an object, got ${describeType(info)}`);
  assertKnownKeys(where, info, ['title', 'version', 'description', 'contact']);
  const { contact, ...texts } = info as Record<string, unknown>;
  assertTexts(where, texts);
  if (contact === undefined) return;
  if (typeof contact !== 'object' || contact === null) throw new OptionError(`${where}.contact must be an object, got ${describeType(contact)}`);
  assertKnownKeys(`${where}.contact`, contact, ['name', 'url', 'email']);
  assertTexts(`${where}.contact`, contact as Record<string, unknown>);
}

/** Throws unless each value of `fields` is absent or a non-empty string. */
function assertTexts(where: string, fields: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      throw new OptionError(`${where}.${key} must be a non-empty string, got ${describeType(value)}`);
    }
  }
}

/**
 * Checks the `openapi` option: `true` or absent serves the document, `false` does not, and
 * an object serves it with its `serverUrl` and `info`. The document also states the
 * router's `limits` and `rateLimit.headers`, given here.
 *
 * @throws OptionError naming the bad option (with a "did you mean" hint for a typo).
 */
export function resolveOpenApiOptions(
  given: boolean | OpenApiOptions | undefined,
  limits: Required<LimitOptions>,
  rateLimitHeaders: RateLimitHeaders,
): OpenApiConfig | false {
  if (given === false) return false;
  const base: OpenApiConfig = { limits, rateLimitHeaders };
  if (given === undefined || given === true) return base;
  if (typeof given !== 'object' || given === null) {
    throw new OptionError(`${WHERE} must be true, false or { serverUrl, info }, got ${describeType(given)}`);
  }
  assertKnownKeys(WHERE, given, ['serverUrl', 'info']);
  if (given.serverUrl !== undefined) assertServerUrl(given.serverUrl);
  if (given.info !== undefined) assertInfo(given.info);
  return {
    ...base,
    ...(given.serverUrl === undefined ? {} : { serverUrl: given.serverUrl }),
    ...(given.info === undefined
      ? {}
      : { info: { ...given.info, ...(given.info.contact === undefined ? {} : { contact: { ...given.info.contact } }) } }),
  };
}

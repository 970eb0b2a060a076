/**
 * Body parsing: refuses a non-JSON `Content-Type` with 415, then lets Express's own JSON
 * parser read the body within the size limit (413) and parse it (400). Before it parses,
 * the raw decoded bytes are checked: an empty body and a body nested deeper than
 * {@link MAX_JSON_DEPTH} are refused without building anything.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { finished } from 'node:stream';
import { createBrotliDecompress, type BrotliDecompress } from 'node:zlib';
import express, { type Request, type RequestHandler } from 'express';
import { SmsError } from '../errors.js';

/**
 * The deepest nesting of arrays and objects a send body may have; the top-level object is
 * level 1. A valid request needs 3 (body, `messages`, one message); the rest is room for the
 * unknown fields old clients send along. A deeper body is refused with 400 before
 * `JSON.parse` builds it: 500,000 nested brackets fit in 1 MB (under a hundred bytes
 * compressed) and cost about 160 ms of CPU to parse, for nothing a request can use.
 */
export const MAX_JSON_DEPTH = 32;

function isJsonMediaType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const semicolon = header.indexOf(';');
  const type = (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

// Our own error types for the raw-body check: body-parser keeps a `type` thrown from its
// `verify` hook, so the answer below is chosen by type like its own errors.
const EMPTY = 'sms.body.empty';
const TOO_DEEP = 'sms.body.too_deep';

/** The body-parser error types and the answer each gets. */
const PARSER_ERRORS: Record<string, SmsError> = {
  'entity.parse.failed': new SmsError('INVALID_JSON'),
  'entity.verify.failed': new SmsError('INVALID_JSON'),
  // The README's error table names one answer for an empty body, however it is framed.
  [EMPTY]: new SmsError('INVALID_JSON'),
  [TOO_DEEP]: new SmsError('INVALID_JSON', `Body is nested more than ${MAX_JSON_DEPTH} levels deep`),
  'request.aborted': new SmsError('INVALID_JSON', 'Request body was cut short'),
  'request.size.invalid': new SmsError('INVALID_JSON', 'Body length does not match Content-Length'),
  'charset.unsupported': new SmsError('UNSUPPORTED_MEDIA_TYPE', 'Body must be UTF-8 encoded JSON'),
  'encoding.unsupported': new SmsError('UNSUPPORTED_MEDIA_TYPE', 'Content-Encoding must be identity, gzip, deflate or br'),
};

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * True when the UTF-8 JSON text in `bytes` opens more than `limit` arrays and objects at
 * once, brackets inside strings not counted. One pass over the bytes (about 1-2 ns each),
 * stopping at the first bracket past the limit, so a hostile body costs no more than its
 * first `limit + 1` brackets. A plain loop rather than `indexOf` jumps from quote to quote:
 * those cost a call per string, which a body of many short strings makes several times
 * slower than the loop.
 *
 * Exact on UTF-8: every byte of a multi-byte sequence is >= 0x80, so an ASCII byte is that
 * character. Malformed text may miscount after its first error, which is harmless: the
 * parser stops there too, having built no more than the well-formed part this scan counted.
 */
export function nestedDeeperThan(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  const length = bytes.length;
  for (let i = 0; i < length; i++) {
    const byte = bytes[i];
    if (byte === QUOTE) {
      // Skip the string. A backslash escapes the byte after it, so `\"` does not end the
      // string and `\\"` does (an escaped backslash, then the closing quote).
      for (i++; i < length; i++) {
        const inner = bytes[i];
        if (inner === QUOTE) break;
        if (inner === BACKSLASH) i++;
      }
    } else if (byte === 0x5b || byte === 0x7b) {
      if (++depth > limit) return true;
    } else if (byte === 0x5d || byte === 0x7d) {
      depth--;
    }
  }
  return false;
}

function bodyError(type: string): Error {
  return Object.assign(new Error(type), { type });
}

/** True for no bytes, or a UTF-8 byte order mark alone (the parser strips it, leaving nothing). */
function isEmpty(bytes: Buffer): boolean {
  return bytes.length === 0 || (bytes.length === 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf);
}

/**
 * body-parser's `verify` hook: it runs on the whole body once read and decompressed (gzip,
 * deflate, br) and before the text is decoded and parsed, which is the one point where a
 * deep body can be refused before `JSON.parse` builds it (a `reviver` runs after). Only
 * UTF-8 is taken (README: other charsets get 415), which also keeps the byte scan exact.
 */
function checkRawBody(_req: unknown, _res: unknown, bytes: Buffer, encoding: string): void {
  if (encoding !== 'utf-8') throw bodyError('charset.unsupported');
  if (isEmpty(bytes)) throw bodyError(EMPTY);
  if (nestedDeeperThan(bytes, MAX_JSON_DEPTH)) throw bodyError(TOO_DEEP);
}

/** True when the Content-Length header says the body had no bytes at all. */
function declaredEmpty(req: Request): boolean {
  const length = req.headers['content-length'];
  return length !== undefined && /^0+$/.test(length);
}

const HOST_PARSED_WARNING =
  'sms-outbox: a request reached the router with its body already parsed by the host app ' +
  '(express.json() mounted before the router?). The router validates that body as it is, but the ' +
  "host's parser now decides the size limit (express.json() defaults to 100 KB, not the router's " +
  'limits.maxBodyBytes), answers malformed or oversized JSON with its own error page instead of ' +
  '{ "details", "code" }, and does not apply the nesting limit. To keep the router\'s answers, mount it ' +
  "before express.json(), or mount express.json() on the host's own routes only.";

/**
 * Returns middleware that leaves the parsed body in `req.body`, or passes an {@link SmsError}
 * on.
 *
 * A body the host app already parsed (its own `express.json()` ran first, so the request
 * stream is consumed and `req.body` set) is kept and validated like any other: there is
 * nothing left to read. The first such request of this router emits a Node process warning
 * (code `SMS_OUTBOX_BODY_PARSED_BY_HOST`, printed to stderr by default) saying what the
 * host's parser now decides; later ones are silent, so a busy host is not flooded.
 */
export function parseJsonBody(maxBodyBytes: number): RequestHandler {
  const tooLarge = new SmsError('BODY_TOO_LARGE', `Body is larger than ${maxBodyBytes} bytes`);
  const notJson = new SmsError('INVALID_JSON');
  const json = express.json({ limit: maxBodyBytes, strict: true, type: () => true, verify: checkRawBody });
  let warned = false;
  return (req, res, next) => {
    if (!isJsonMediaType(req.headers['content-type'])) {
      next(new SmsError('UNSUPPORTED_MEDIA_TYPE'));
      return;
    }
    // Consumed stream and a body set: the host's parser ran. A body set on a stream still
    // unread (body-parser 1.x sets `{}` on requests it skips) is read here as usual.
    if (req.body !== undefined && !req.readable) {
      if (!warned) {
        warned = true;
        process.emitWarning(HOST_PARSED_WARNING, { code: 'SMS_OUTBOX_BODY_PARSED_BY_HOST' });
      }
      // express.json() reads an empty body as `{}`; Content-Length: 0 still tells it apart.
      next(declaredEmpty(req) ? notJson : undefined);
      return;
    }
    // No body at all (neither a length nor chunks) is no JSON document either. Asked here,
    // not of the parser: body-parser 1.x (Express 4) sets `{}` for it, 2.x leaves nothing.
    if (!hasBody(req)) {
      next(notJson);
      return;
    }
    const brotli = brotliDecoded(req);
    const source = brotli ?? req;
    json(source as Request, res, (error?: unknown) => {
      const answer = (): void => {
        if (error === undefined) {
          next();
          return;
        }
        const type = (error as { type?: string }).type;
        if (type === 'entity.too.large') next(tooLarge);
        else next((type !== undefined && PARSER_ERRORS[type]) || notJson);
      };
      if (brotli === null) {
        answer();
        return;
      }
      req.unpipe(brotli);
      brotli.destroy();
      if (error === undefined) req.body = brotli.body;
      // As the parser does with its own decoders: read off the rest of the request, then answer.
      req.resume();
      finished(req, answer);
    });
  };
}

/** type-is's `hasBody`, which both body-parser versions ask before reading. */
function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(req.headers['content-length'] ?? NaN));
}

/** A request body as the JSON parser reads it: a stream with the request's headers. */
type BodySource = BrotliDecompress & { headers: IncomingHttpHeaders; body?: unknown };

/**
 * A `Content-Encoding: br` body, decoded for the JSON parser, or null for any other.
 * Express 5's parser (body-parser 2) decodes brotli itself, Express 4's (body-parser 1)
 * answers it 415; decoding it here gives both the same answers. The parser then reads the
 * decoded stream as an identity body with no declared length, through its own limit (on the
 * decoded bytes, as for gzip), charset, `verify` and parse steps.
 */
function brotliDecoded(req: Request): BodySource | null {
  if ((req.headers['content-encoding'] ?? '').toLowerCase() !== 'br') return null;
  const headers: IncomingHttpHeaders = { ...req.headers, 'content-encoding': 'identity', 'transfer-encoding': 'chunked' };
  delete headers['content-length'];
  const decoded: BodySource = Object.assign(createBrotliDecompress(), { headers });
  // The parser hears a corrupt body through its own listener while it reads; this one keeps
  // an error after that (or after the stream is destroyed) from crashing the process.
  decoded.on('error', () => undefined);
  // A client gone mid-body ends the read as an aborted request, which the parser reports.
  req.once('close', () => {
    if (!req.complete) decoded.emit('aborted');
  });
  req.pipe(decoded);
  return decoded;
}

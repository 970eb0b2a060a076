/**
 * Body parsing: refuses a non-JSON `Content-Type` with 415, then lets Express's own JSON
 * parser read the body within the size limit (413) and parse it (400).
 */
import express, { type RequestHandler } from 'express';
import { SmsError } from '../errors.js';

function isJsonMediaType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const semicolon = header.indexOf(';');
  const type = (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** The body-parser error types and the answer each gets. */
const PARSER_ERRORS: Record<string, SmsError> = {
  'entity.parse.failed': new SmsError('INVALID_JSON'),
  'entity.verify.failed': new SmsError('INVALID_JSON'),
  'request.aborted': new SmsError('INVALID_JSON', 'Request body was cut short'),
  'request.size.invalid': new SmsError('INVALID_JSON', 'Body length does not match Content-Length'),
  'charset.unsupported': new SmsError('UNSUPPORTED_MEDIA_TYPE', 'Body must be UTF-8 encoded JSON'),
  'encoding.unsupported': new SmsError('UNSUPPORTED_MEDIA_TYPE', 'Content-Encoding must be identity, gzip, deflate or br'),
};

/**
 * Returns middleware that leaves the parsed body in `req.body`, or passes an {@link SmsError}
 * on. A body the host app already parsed (its own `express.json()` ran first) is kept.
 */
export function parseJsonBody(maxBodyBytes: number): RequestHandler {
  const tooLarge = new SmsError('BODY_TOO_LARGE', `Body is larger than ${maxBodyBytes} bytes`);
  const json = express.json({ limit: maxBodyBytes, strict: true, type: () => true });
  return (req, res, next) => {
    if (!isJsonMediaType(req.headers['content-type'])) {
      next(new SmsError('UNSUPPORTED_MEDIA_TYPE'));
      return;
    }
    json(req, res, (error?: unknown) => {
      if (error === undefined) {
        // No body at all is no JSON document either.
        next(req.body === undefined ? new SmsError('INVALID_JSON', 'Body is empty') : undefined);
        return;
      }
      const type = (error as { type?: string }).type;
      if (type === 'entity.too.large') next(tooLarge);
      else next((type !== undefined && PARSER_ERRORS[type]) || new SmsError('INVALID_JSON'));
    });
  };
}

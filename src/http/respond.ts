/**
 * Writing JSON answers. Bypasses `res.json` on purpose: it would compute an ETag over every
 * body, which costs time and means nothing for a POST answer.
 */
import type { Response } from 'express';
import type { ErrorCode } from '../errors.js';

/** Sends `body` (already serialised) as JSON with `status`. */
export function sendJsonText(res: Response, status: number, body: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/**
 * Sends an error answer, `{ "details": details, "code": code }` with `status`. `details` comes
 * first: clients of the original service read the body as `{ details }`, and `code` is the
 * registry's name for the same refusal, for programs to match.
 */
export function sendError(res: Response, error: { status: number; details: string; code: ErrorCode }): void {
  sendJsonText(res, error.status, JSON.stringify({ details: error.details, code: error.code }));
}

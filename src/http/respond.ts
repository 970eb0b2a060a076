/**
 * Writing JSON answers. Bypasses `res.json` on purpose: it would compute an ETag over every
 * body, which costs time and means nothing for a POST answer.
 */
import type { Response } from 'express';

/** Sends `body` (already serialised) as JSON with `status`. */
export function sendJsonText(res: Response, status: number, body: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** Sends `{ "details": details }` with `status`. */
export function sendDetails(res: Response, status: number, details: string): void {
  sendJsonText(res, status, JSON.stringify({ details }));
}

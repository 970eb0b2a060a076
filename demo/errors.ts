/**
 * The demo's error answers: `{ details, code }` as the package's. Where the package's
 * registry has a code for the case (`VALIDATION_FAILED`, `INVALID_JSON`, `MISSING_API_KEY`,
 * ...), the demo answers with it; the few cases only a demo host has get codes of their own,
 * listed here and in docs/demo.md.
 */
import type { ErrorRequestHandler, Response } from 'express';
import { ERRORS, type ErrorCode } from '../src/index.js';

/** The demo's own codes, with their HTTP status. */
export const DEMO_ERRORS = {
  /** The request's Host header is not a name of the demo's (DNS rebinding). */
  HOST_NOT_ALLOWED: 403,
  /** `POST /demo/mo` on a demo with a real SMSC: its MO messages come from the SMSC. */
  NO_SIMULATED_CARRIER: 409,
} as const;

/** A code the demo answers with. */
export type DemoErrorCode = ErrorCode | keyof typeof DEMO_ERRORS;

/** Answers `{ details, code }` with the code's status. */
export function refuse(res: Response, code: DemoErrorCode, details: string): void {
  const status = code in DEMO_ERRORS ? DEMO_ERRORS[code as keyof typeof DEMO_ERRORS] : ERRORS[code as ErrorCode].status;
  res.status(status).set('Cache-Control', 'no-store').json({ details, code });
}

/**
 * The demo's last error handler. A body that `express.json` could not read (a stranger's
 * POST to `/demo/dlr`) is 400 `INVALID_JSON` or 413 `BODY_TOO_LARGE`, as the API answers,
 * rather than Express's HTML page with a stack; any other error is one line through `log`
 * and a 500 `SERVER_ERROR`, its stack kept off the console and out of the answer.
 */
export function lastErrors(log: (line: string) => void): ErrorRequestHandler {
  return (error: { type?: string; name?: string; message?: string }, _req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    if (error.type === 'entity.parse.failed') refuse(res, 'INVALID_JSON', 'Body is not valid JSON');
    else if (error.type === 'entity.too.large') refuse(res, 'BODY_TOO_LARGE', 'Body is too large');
    else {
      log(`error         [demo] ${error.name ?? 'Error'}: ${error.message ?? String(error)}`);
      refuse(res, 'SERVER_ERROR', 'The demo could not answer; its console says why');
    }
  };
}

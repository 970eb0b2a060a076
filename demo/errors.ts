/**
 * The demo's error answers: `{ details, code }` as the package's. Where the package's
 * registry has a code for the case (`VALIDATION_FAILED`, `INVALID_JSON`, `MISSING_API_KEY`,
 * ...), the demo answers with it; the few cases only a demo host has get codes of their own,
 * listed here and in docs/demo.md.
 */
import type { Response } from 'express';
import { ERRORS, type ErrorCode } from '../src/index.js';

/** The demo's own codes, with their HTTP status. */
export const DEMO_ERRORS = {
  /** The request's Host header is not a name of the demo's (DNS rebinding). */
  HOST_NOT_ALLOWED: 403,
  /** `POST /demo/mo` on a demo with a real SMSC: its MO messages come from the SMSC. */
  NO_SIMULATED_CARRIER: 409,
  /** As many dashboard streams are open as the demo serves at once. */
  TOO_MANY_STREAMS: 503,
} as const;

/** A code the demo answers with. */
export type DemoErrorCode = ErrorCode | keyof typeof DEMO_ERRORS;

/** Answers `{ details, code }` with the code's status. */
export function refuse(res: Response, code: DemoErrorCode, details: string): void {
  const status = code in DEMO_ERRORS ? DEMO_ERRORS[code as keyof typeof DEMO_ERRORS] : ERRORS[code as ErrorCode].status;
  res.status(status).set('Cache-Control', 'no-store').json({ details, code });
}

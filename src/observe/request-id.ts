/**
 * The host's request id, for the events (and so the log lines) a request causes: what
 * pino-http, or any middleware that follows its convention, puts in `req.id`.
 */
import type { RequestId } from './events.js';

/**
 * `req.id` when it is a non-empty string or a finite number (pino-http's default ids are
 * numbers), else `undefined`: an object there is some other middleware's, not an id.
 */
export function requestIdOf(req: object): RequestId | undefined {
  const id: unknown = (req as { id?: unknown }).id;
  if (typeof id === 'string') return id === '' ? undefined : id;
  return typeof id === 'number' && Number.isFinite(id) ? id : undefined;
}

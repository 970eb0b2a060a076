/**
 * The payload of the key event (`key.expired`; docs/keys.md#expiry), kept beside events.ts,
 * which maps the name to it.
 *
 * @module
 */
import type { EndpointName } from '../endpoints.js';

/**
 * Payload of `key.expired`: a request came with a key past its `expiresAt` and was refused
 * 401 `KEY_EXPIRED` (one event per such request). A client still on a rotated-out key shows
 * here, by its principal.
 */
export interface KeyExpiredEvent {
  /** The key's principal. */
  principalId: string;
  /** When the key expired, epoch ms. */
  expiresAt: number;
  /** Which endpoint the request was for. */
  endpoint: EndpointName;
  /** The client's address as Express sees it (`req.ip`). */
  ip: string | undefined;
  /** The host's id of the request (`req.id`, as pino-http sets it), when it has one. */
  requestId?: string | number;
}

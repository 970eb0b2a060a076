/**
 * The payloads of the callback endpoint events (`callback.endpoint_paused`,
 * `callback.endpoint_resumed`; docs/callbacks.md), kept beside events.ts, which maps the
 * names to them.
 *
 * @module
 */

/** Payload of `callback.endpoint_paused`: a callback URL failed for `dlr.pauseAfterMs`, and is no longer tried. */
export interface CallbackEndpointPausedEvent {
  /** The URL paused. */
  url: string;
  /** When its first failure since its last success was, epoch ms (on this instance). */
  failingSince: number;
  /** When it was paused, epoch ms. */
  at: number;
}

/** Payload of `callback.endpoint_resumed`: a paused callback URL is tried again. */
export interface CallbackEndpointResumedEvent {
  /** The URL resumed. */
  url: string;
  /** `replay` (a replay of its principal's reports) or `api` (`router.callbacks.resume`). */
  by: 'replay' | 'api';
  /** When, epoch ms. */
  at: number;
}

/**
 * The bounds on what one request may carry, and their defaults: the send endpoints'
 * validation and the OpenAPI document both state them.
 */

/** Bounds on what one request may carry. */
export interface LimitOptions {
  /** Largest accepted body, in bytes; larger answers 413. Default 1 MiB (1,048,576). */
  maxBodyBytes?: number;
  /** Most messages (or `to` numbers) in one request; more answers 422. Default 1000. */
  maxMessagesPerRequest?: number;
  /** Most SMS units one message may need; more answers 422. Default 10. */
  maxSegments?: number;
}

/** The default request bounds (also what the OpenAPI document states when given none). */
export const LIMIT_DEFAULTS: Readonly<Required<LimitOptions>> = {
  maxBodyBytes: 1024 * 1024,
  maxMessagesPerRequest: 1000,
  maxSegments: 10,
};

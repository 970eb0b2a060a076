/**
 * The names of the storage contract's optional methods, for code that must handle each of
 * them without writing them out: the router's adapter check, and a wrapper adapter that
 * offers a method only when the storage it wraps has it.
 *
 * @module
 */
import type { Storage } from './contract.js';
import { INBOUND_METHODS } from './inbound-record.js';

/**
 * Every optional method of {@link Storage} that a feature rests on: the queue count,
 * idempotency keys, the credit ledger, scheduled sends and cancel, the message list, the report log, report recovery, the
 * erase steps, inbound messages and opt-outs. The router turns a feature off for a storage without its methods, so a wrapper
 * should offer each only when the storage it wraps has it. `ready` and `close`, optional
 * too, are lifecycle hooks that a wrapper can always pass on, and are not listed.
 */
export const OPTIONAL_STORAGE_METHODS = [
  'countQueued',
  'findIdempotency',
  'purgeIdempotency',
  'redactTexts',
  'topUpCredit',
  'creditBalance',
  'countedUnits',
  'purgeCounters',
  'promoteScheduled',
  'expireUnsent',
  'cancelMessages',
  'listMessages',
  'readReports',
  'listCallbacks',
  'replayCallbacks',
  'eraseMessages',
  'eraseIdempotency',
  'eraseInbound',
  ...INBOUND_METHODS,
  'storeInboundPart',
  'listInboundWebhooks',
  'replayInboundWebhooks',
] as const satisfies readonly (keyof Storage)[];

/** The optional keys of `T`. */
type OptionalKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? K : never }[keyof T];

/** Compiles only for `never`. */
type None<T extends never> = T;

/**
 * Fails to compile when {@link Storage} gains an optional method the list lacks, so a wrapper
 * built on the list cannot drop a feature unnoticed.
 */
type UnlistedStorageMethods = None<Exclude<OptionalKeys<Storage>, 'ready' | 'close' | (typeof OPTIONAL_STORAGE_METHODS)[number]>>;

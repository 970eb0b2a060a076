/**
 * The storage's `ready()`, awaited once for the whole router: every path that reaches
 * storage (the request handlers, the worker, the report sender, the sweeps, and the host's
 * own calls through `router.credit` and `router.optOuts`) waits for the same promise, so no
 * call reaches a storage whose schema is not made yet.
 *
 * @module
 */
import type { Storage } from '../storage/contract.js';

/** One memoised `ready()` of a storage. */
export interface StorageReadiness {
  /**
   * Resolves once `storage.ready()` has; every caller shares one call. A failed `ready()` is
   * forgotten, so the next caller tries again (the database was down at boot, and is back).
   */
  ready(): Promise<void>;
}

/** The memoised `ready()` of `storage` (see {@link StorageReadiness}). */
export function storageReadiness(storage: Storage): StorageReadiness {
  let pending: Promise<void> | null = null;
  return {
    ready: () =>
      (pending ??= Promise.resolve()
        .then(() => storage.ready?.())
        .catch((error: unknown) => {
          pending = null;
          throw error;
        })),
  };
}

/** `methods`, each of which first waits for `ready`: for the storage calls a host makes itself. */
export function afterReady<T extends object>(ready: () => Promise<void>, methods: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(methods)) {
    wrapped[name] =
      typeof method === 'function'
        ? async (...args: unknown[]) => {
            await ready();
            return (method as (...a: unknown[]) => unknown).apply(methods, args);
          }
        : method;
  }
  return wrapped as T;
}

/**
 * The router's `storage` option: checked once at construction for the methods of the
 * {@link Storage} contract (a missing one would fail every request or worker step far from
 * the option that caused it), with its default, a new {@link MemoryStorage}.
 */
import { OptionError } from '../errors.js';
import { assertAdapter, optionalAdapter, type MethodTable } from '../util/adapter-check.js';
import type { Storage } from './contract.js';
import { INBOUND_METHODS } from './inbound-record.js';
import { MemoryStorage } from './memory/adapter.js';
import { OPTIONAL_STORAGE_METHODS } from './optional-methods.js';

/** The {@link Storage} contract's methods (`true`: required), checked at construction. */
const STORAGE_METHODS = {
  ready: false,
  close: false,
  ...(Object.fromEntries(OPTIONAL_STORAGE_METHODS.map((name) => [name, false])) as Record<(typeof OPTIONAL_STORAGE_METHODS)[number], false>),
  insertMessages: true,
  claimMessages: true,
  recordSubmission: true,
  reschedule: true,
  finish: true,
  expireOverdue: true,
  applyReceipt: true,
  getMessage: true,
  findByExternalId: true,
  claimCallbacks: true,
  deferCallbacks: true,
  recordCallbackAttempt: true,
  purge: true,
} as const satisfies MethodTable<Storage>;

/** Checks the `storage` option; without one, a new {@link MemoryStorage} (lost on restart). */
export function resolveStorage(given: Storage | undefined): Storage {
  const storage = optionalAdapter('storage', given, 'new MemoryStorage(), lost on restart', (where, value) => {
    assertAdapter(where, value, STORAGE_METHODS, 'Storage');
    // The inbound methods serve one flow together: half of them would fail at the first MO.
    const has = INBOUND_METHODS.filter((name) => typeof (value as Record<string, unknown>)[name] === 'function');
    if (has.length > 0 && has.length < INBOUND_METHODS.length) {
      const missing = INBOUND_METHODS.filter((name) => !has.includes(name)).map((name) => `${name}()`);
      throw new OptionError(`${where} has some inbound methods but not ${missing.join(', ')}: give all of them or none`, 'INVALID_ADAPTER');
    }
  });
  return storage ?? new MemoryStorage();
}

/**
 * The router's `storage` option: a full {@link Storage}, or a {@link RecordStore} that the
 * library's ledger wraps (`createLedger`), checked once at construction for the methods of
 * its contract (a missing one would fail every request or worker step far from the option
 * that caused it), with its default, the memory storage.
 *
 * @module
 */
import { OptionError } from '../errors.js';
import { assertAdapter, optionalAdapter, type MethodTable } from '../util/adapter-check.js';
import type { Storage } from './contract.js';
import { INBOUND_METHODS } from './inbound-record.js';
import { MemoryStorage } from './memory/adapter.js';
import { OPTIONAL_STORAGE_METHODS } from './optional-methods.js';
import { isRecordStore, type RecordStore } from './record-store.js';
import { createLedger } from '../ledger/index.js';

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

/** The {@link RecordStore} contract's methods (`true`: required), checked at construction. */
const RECORD_STORE_METHODS = {
  ready: false,
  close: false,
  countQueued: false,
  listMessages: false,
  readReports: false,
  insertMessages: true,
  getMessage: true,
  findByExternalId: true,
  findByCarrierId: true,
  claimMessages: true,
  claimReports: true,
  dueMessages: true,
  queueEnds: true,
  writeMessages: true,
  deleteMessages: true,
  findIdempotency: true,
  purgeIdempotency: true,
  addCredit: true,
  creditBalance: true,
  countedUnits: false,
  listCallbacks: false,
  findByRecipient: false,
  scanIdempotency: false,
  rewriteIdempotency: false,
  purgeCounters: false,
} as const satisfies MethodTable<RecordStore>;

/** Throws unless `value` has all of the inbound methods or none: half of them would fail at the first MO. */
function assertInboundWhole(where: string, value: object): void {
  const has = INBOUND_METHODS.filter((name) => typeof (value as Record<string, unknown>)[name] === 'function');
  if (has.length > 0 && has.length < INBOUND_METHODS.length) {
    const missing = INBOUND_METHODS.filter((name) => !has.includes(name)).map((name) => `${name}()`);
    throw new OptionError(`${where} has some inbound methods but not ${missing.join(', ')}: give all of them or none`, 'INVALID_ADAPTER');
  }
}

/**
 * Checks the `storage` option: a record store is wrapped by the ledger, a full storage is
 * used as it is; without one, a new {@link MemoryStorage} (lost on restart).
 */
export function resolveStorage(given: Storage | RecordStore | undefined): Storage {
  const storage = optionalAdapter('storage', given, 'new MemoryStorage(), lost on restart', (where, value) => {
    if (typeof value === 'object' && value !== null && isRecordStore(value)) assertAdapter(where, value, RECORD_STORE_METHODS, 'RecordStore');
    else assertAdapter(where, value, STORAGE_METHODS, 'Storage');
    assertInboundWhole(where, value as object);
  });
  if (storage === undefined) return new MemoryStorage();
  return isRecordStore(storage) ? createLedger(storage) : storage;
}

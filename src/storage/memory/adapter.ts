/**
 * `MemoryStorage`, the default storage: the ledger over a {@link MemoryRecordStore}. Kept
 * as a class of its own so that hosts and tests write `new MemoryStorage()` as with the
 * other bundled storages.
 *
 * @module
 */
import type { Storage } from '../contract.js';
import type { OPTIONAL_STORAGE_METHODS } from '../optional-methods.js';
import { MemoryRecordStore } from './index.js';
import { Ledger } from '../../ledger/ledger.js';

/** What the memory storage offers: the whole `Storage` contract, every optional group included. */
export type MemoryStorage = Ledger & Required<Pick<Storage, OptionalMethod>>;

/** The optional methods of `Storage` (and `ready`, `close`), every one of which the memory storage has. */
type OptionalMethod = (typeof OPTIONAL_STORAGE_METHODS)[number] | 'ready' | 'close';

/**
 * Storage in this process's memory: the default.
 *
 * Everything is lost when the process stops, so an acknowledged message that was not yet
 * submitted is lost with it; use `sms-outbox/sqlite`, `sms-outbox/postgres` or
 * `sms-outbox/mysql` where that matters. Serves one process only: two instances (or two
 * processes) do not share state. Records are copied on the way out, so a caller cannot
 * change stored state by mutating them.
 */
// A class expression, so that its type can say what the ledger offers only when its store
// has it: the memory store has every optional method. Anonymous, so it is named after the
// constant (`did you mean new MemoryStorage()?`).
export const MemoryStorage = class extends Ledger {
  constructor() {
    super(new MemoryRecordStore());
  }
} as new () => MemoryStorage;

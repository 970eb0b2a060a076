/**
 * `PostgresStorage`: the library's ledger over the PostgreSQL record store (store.ts) and its
 * inbound (MO) rows (inbound.ts: the shared SQL layer's, three steps in one statement).
 * Every rule on a message is the ledger's; PostgreSQL only stores.
 *
 * @module
 */
import { Ledger } from '../../ledger/ledger.js';
import type { Storage } from '../contract.js';
import type { InboundStorage } from '../inbound-record.js';
import { resolvePostgresOptions, type PostgresStorageOptions } from './options.js';
import { PostgresRecordStore } from './store.js';

/** What the PostgreSQL storage offers: the whole contract, with the queue count and the inbound steps. */
export type PostgresStorage = Ledger & Required<Pick<Storage, 'ready' | 'close' | 'countQueued'>> & InboundStorage;

/**
 * Storage in PostgreSQL, for many instances of the service behind a load balancer.
 *
 * Takes the host's `pg.Pool` and never ends it. Tables live in their own schema (default
 * `sms_outbox`), created on first `ready()`; instances starting together create them once
 * (an advisory lock), and a schema the earlier PostgreSQL adapter made has its messages
 * moved into the new tables then. Claims use `FOR UPDATE SKIP LOCKED` with leases, so two
 * instances never claim the same due message while its lease lives; every change of a
 * message is a compare-and-set write of its row, so two instances applying receipts for two
 * parts end the message once. The writes of one event-loop turn go out as one statement
 * (store.ts), so under load they share a round trip and a commit. Times are stored as epoch
 * milliseconds in `bigint` columns.
 */
// A class expression, so that its type can say what the ledger offers on this store.
// Anonymous, so it is named after the constant.
export const PostgresStorage = class extends Ledger {
  constructor(options: PostgresStorageOptions) {
    const { pool, schema } = resolvePostgresOptions(options);
    super(new PostgresRecordStore(pool, schema));
  }
} as new (options: PostgresStorageOptions) => PostgresStorage;

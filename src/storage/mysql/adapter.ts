/**
 * `MysqlRecordStore`: the record store on MariaDB (10.6+) or MySQL (8.0+), through `mysql2`.
 * The statements are the shared SQL layer's (storage/sql/: the record store and the inbound
 * group); this file holds the pool, and the dialect and client it is given are in dialect.ts
 * and client.ts.
 *
 * @module
 */
import type { Pool } from 'mysql2/promise';
import { requirePeer } from '../../util/require-peer.js';
import { SqlInbound } from '../sql/inbound.js';
import { inboundMigration, inboundRecoveryMigration, sqlInboundTables } from '../sql/inbound-schema.js';
import { OWN_STEPS_FROM } from '../sql/schema.js';
import { SqlRecordStore } from '../sql/store.js';
import { mysqlClient } from './client.js';
import { mysqlDialect } from './dialect.js';
import { resolveMysqlOptions, type MysqlRecordStoreOptions } from './options.js';

/**
 * A record store on MariaDB or MySQL: pass it as `storage` to `createSmsRouter` (the router
 * runs the library's ledger on it). Its tables (`<tablePrefix>messages` and seven more) are
 * created by `ready()`, with a binary collation: keys are case-sensitive. Claims lock with
 * `FOR UPDATE SKIP LOCKED`, so instances sharing the database claim disjoint messages. Keeps
 * inbound (MO) messages, their webhooks and the opt-out list too (`inbound`).
 *
 * @example
 * ```ts
 * import mysql from 'mysql2/promise';
 * import { MysqlRecordStore } from 'sms-outbox/mysql';
 * const storage = new MysqlRecordStore({ pool: mysql.createPool({ host, user, password, database }) });
 * ```
 */
export class MysqlRecordStore extends SqlRecordStore {
  /** See {@link RecordStore.inbound}. */
  readonly inbound: SqlInbound;
  readonly #pool: Pool;
  readonly #ownsPool: boolean;

  /** A store on the host's pool, or on a pool of its own made from `uri` or `connection`. */
  constructor(options: MysqlRecordStoreOptions) {
    const { source, tablePrefix } = resolveMysqlOptions(options);
    const pool =
      'pool' in source
        ? source.pool
        : requirePeer<typeof import('mysql2/promise')>('mysql2/promise', 'sms-outbox/mysql').createPool(source.make);
    const client = mysqlClient(pool);
    // The inbound tables are the store's own steps, beside the shared record tables'.
    super(client, mysqlDialect, tablePrefix, [
      inboundMigration(mysqlDialect, tablePrefix, OWN_STEPS_FROM),
      inboundRecoveryMigration(mysqlDialect, tablePrefix, OWN_STEPS_FROM + 1),
    ]);
    this.#pool = pool;
    this.#ownsPool = !('pool' in source);
    this.inbound = new SqlInbound(client, mysqlDialect, sqlInboundTables(mysqlDialect, tablePrefix), () => this.ready());
  }

  /** Ends the pool the store made itself; a pool the host passed is left open. */
  override async close(): Promise<void> {
    if (this.#ownsPool) await this.#pool.end();
  }
}

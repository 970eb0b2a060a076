/**
 * The options of the PostgreSQL storage and their checking. A wrong pool or schema name
 * must fail when the storage is made, with a message that names the option, rather than at
 * the first query; and the schema name is inlined in SQL, so it is held to a plain
 * identifier here, before any statement is built from it.
 *
 * @module
 */
import type { Pool } from 'pg';
import { assertIdentifier, assertKnownKeys } from '../../util/known-keys.js';
import { OptionError } from '../../errors.js';

/** Options of `PostgresStorage` (adapter.ts). */
export interface PostgresStorageOptions {
  /**
   * The host's pool (`new pg.Pool(...)`). The storage borrows clients from it and never
   * ends it, so the host may share it with its own queries and must end it itself.
   */
  pool: Pool;
  /**
   * The schema holding the tables, created if missing. Default `sms_outbox`. Letters,
   * digits and `_`, not starting with a digit, at most 63 characters; every instance of
   * one deployment must name the same schema.
   */
  schema?: string;
}

/** {@link PostgresStorageOptions} checked, with the default schema filled in. */
export interface ResolvedPostgresOptions {
  /** The host's pool. */
  pool: Pool;
  /** The schema name, unquoted. */
  schema: string;
}

const KNOWN_OPTIONS = ['pool', 'schema'] as const;

/** Checks `options`; throws a TypeError for a missing pool, a bad schema name or an unknown option. */
export function resolvePostgresOptions(options: PostgresStorageOptions): ResolvedPostgresOptions {
  if (options === null || typeof options !== 'object') {
    throw new OptionError('PostgresStorage: options must be an object with a `pool`');
  }
  assertKnownKeys('PostgresStorage', options, KNOWN_OPTIONS);
  const pool = options.pool as Partial<Pool> | null | undefined;
  if (typeof pool?.query !== 'function' || typeof pool.connect !== 'function') {
    throw new OptionError('PostgresStorage: `pool` must be a pg.Pool (npm install pg, then new pg.Pool({ connectionString }))');
  }
  const schema = options.schema ?? 'sms_outbox';
  assertIdentifier('PostgresStorage: `schema`', schema, 63);
  return { pool: options.pool, schema };
}

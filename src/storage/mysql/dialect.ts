/**
 * The MariaDB/MySQL SQL text of the shared SQL record store: InnoDB tables in utf8mb4 with a
 * binary collation (keys compare byte for byte, so `abc` and `ABC` are two keys), `?`
 * placeholders, `INSERT IGNORE` and `ON DUPLICATE KEY UPDATE`.
 *
 * @module
 */
import type { SqlDialect } from '../sql/dialect.js';
import { placeholdersOf } from '../sql/dialect.js';

/** The dialect of MariaDB 10.6+ and MySQL 8.0+ (the first with `SKIP LOCKED`). */
export const mysqlDialect: SqlDialect = {
  types: {
    // 255 characters of 4 bytes: a two-key index still fits InnoDB's 3072-byte limit.
    key: 'VARCHAR(255)',
    text: 'LONGTEXT',
    // LONGTEXT rather than JSON: MariaDB's JSON checks every document on write, MySQL's
    // rewrites it, and the store only keeps it.
    json: 'LONGTEXT',
    bigint: 'BIGINT',
    double: 'DOUBLE',
    serial: 'BIGINT NOT NULL AUTO_INCREMENT',
  },
  tableOptions: ' ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin',
  quote: (name) => `\`${name.replaceAll('`', '``')}\``,
  placeholders: (sql) => sql,
  indexPrefix: (column, chars) => `${column}(${chars})`,
  insertIgnore: (table, columns, values) => `INSERT IGNORE INTO ${table} (${columns}) VALUES ${values}`,
  upsertAdd: (table, keyColumns, column) =>
    `INSERT INTO ${table} (${keyColumns}, ${column}) VALUES (${placeholdersOf(keyColumns)}, ?) ON DUPLICATE KEY UPDATE ${column} = ${column} + VALUES(${column})`,
  forceIndex: (index) => ` FORCE INDEX (${index})`,
  lockSkipLocked: 'FOR UPDATE SKIP LOCKED',
  jsonText: (column, path) =>
    `JSON_UNQUOTE(JSON_EXTRACT(${column}, '$${path.map((step) => (typeof step === 'number' ? `[${step}]` : `.${step}`)).join('')}'))`,
};

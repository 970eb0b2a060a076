/**
 * The PostgreSQL SQL text of the shared SQL record store: tables in the storage's own schema
 * (names quoted and schema-qualified), `$n` placeholders, `ON CONFLICT`. Text compares byte
 * for byte under `=` (a deterministic collation), so keys are case-sensitive as they are.
 *
 * @module
 */
import type { SqlDialect } from '../sql/dialect.js';
import { placeholdersOf } from '../sql/dialect.js';

/** `name` quoted as a PostgreSQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** `sql` with each `?` rewritten `$1`, `$2`... (the shared statements have none inside a literal). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/**
 * The dialect of tables in schema `schema`. `qualify` false gives bare names: an index is
 * named without its schema (PostgreSQL puts it in its table's), so the schema's creation
 * quotes index names with it.
 */
export function postgresDialect(schema: string, qualify = true): SqlDialect {
  const s = quoteIdent(schema);
  return {
    types: {
      key: 'text',
      text: 'text',
      // text rather than jsonb: the store only keeps the document, and jsonb would parse it on every write.
      json: 'text',
      bigint: 'bigint',
      double: 'double precision',
      serial: 'bigint GENERATED ALWAYS AS IDENTITY',
    },
    tableOptions: '',
    quote: (name) => (qualify ? `${s}.${quoteIdent(name)}` : quoteIdent(name)),
    placeholders: numbered,
    // B-tree entries take text up to about 2,700 bytes: external ids are indexed whole.
    indexPrefix: (column) => column,
    insertIgnore: (table, columns, values) => `INSERT INTO ${table} (${columns}) VALUES ${values} ON CONFLICT DO NOTHING`,
    upsertAdd: (table, keyColumns, column) =>
      `INSERT INTO ${table} AS t (${keyColumns}, ${column}) VALUES (${placeholdersOf(keyColumns)}, ?) ON CONFLICT (${keyColumns}) DO UPDATE SET ${column} = t.${column} + EXCLUDED.${column}`,
    // PostgreSQL locks the rows a LIMIT returns, whatever plan reads them.
    forceIndex: () => '',
    lockSkipLocked: 'FOR UPDATE SKIP LOCKED',
    jsonText: (column, path) => `(${column}::jsonb #>> '{${path.join(',')}}')`,
  };
}

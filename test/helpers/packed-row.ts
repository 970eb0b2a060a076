/**
 * Where a SQL record store's row keeps what some tests read in SQL: positions in the row's
 * packed `data` document (`PackedData` in src/storage/sql/rows.ts). A part there is
 * `[carrierId]` until its receipt, then `[carrierId, state, reason, description]`.
 */
export const PACKED = { state: 15, parts: 21, callback: 22, reportUid: 27 } as const;

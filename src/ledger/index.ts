/**
 * The ledger: the full `Storage` contract over any `RecordStore` (see ledger.ts).
 *
 * @module
 */
export { createLedger, Ledger } from './ledger.js';

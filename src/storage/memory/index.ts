/**
 * The memory record store: {@link MemoryRecordStore}, the `RecordStore` primitives in this
 * process's memory.
 *
 * @module
 */
export { MemoryRecordStore } from './store.js';

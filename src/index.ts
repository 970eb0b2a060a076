export * from './lifecycle/states.js';
export type * from './storage/contract.js';
export * from './delivery/contract.js';
export * from './events.js';

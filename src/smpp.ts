/**
 * `sms-outbox/smpp`: the SMPP 3.4 delivery adapter. Needs the `smpp` package installed
 * (an optional peer dependency); hosts that never import this entry never load it.
 */
export { SmppDelivery, createSmppDelivery } from './delivery/smpp/adapter.js';
export type { SmppDeliveryOptions, SmppSharedRateOptions } from './delivery/smpp/options.js';
export {
  classifySubmitStatus,
  interpretReceipt,
  outcomeOfStat,
  parseReceiptText,
  MESSAGE_STATE_STATS,
  PERMANENT_SUBMIT_STATUSES,
  THROTTLE_SUBMIT_STATUSES,
  type InterpretedReceipt,
  type ReceiptFields,
  type ReceiptInput,
  type SubmitStatusClass,
} from './delivery/smpp/receipt.js';
export { parseSmppUrl, type SmppUrlFields } from './delivery/smpp/url.js';
export { smppRoutes, type SmppRoutesOptions } from './delivery/smpp/routes-spec.js';

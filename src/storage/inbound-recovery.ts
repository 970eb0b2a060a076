/**
 * Inbound (MO) webhook recovery (`GET {base}/callbacks?kind=inbound`, and the replay): what
 * its storage methods ({@link InboundStorage.listInboundWebhooks},
 * {@link InboundStorage.replayInboundWebhooks}) share. The queries are report recovery's
 * ({@link CallbackListFilter}), read on the inbound message's arrival: its `receivedAt`
 * stands where a report's message has its `createdAt`.
 *
 * @module
 */
import type { CallbackListFilter } from './callback-list.js';
import type { InboundRecord, InboundStorage } from './inbound-record.js';

/** A storage with inbound webhook recovery. */
export type InboundRecoveryStorage = Required<Pick<InboundStorage, 'listInboundWebhooks' | 'replayInboundWebhooks'>>;

/** Whether `record` is on the list `filter` asks for: its principal's, received in range, its webhook in one of `states`. */
export function matchesInboundFilter(record: InboundRecord, filter: CallbackListFilter, states: readonly string[]): boolean {
  const state = record.callback?.state;
  if (record.principalId !== filter.principalId || state === undefined || !states.includes(state)) return false;
  if (filter.since !== undefined && record.receivedAt < filter.since) return false;
  return filter.until === undefined || record.receivedAt < filter.until;
}

/**
 * The storage contract suite's fixtures: a fixed clock, the outcomes and lease the tests use,
 * and builders of messages and receipts. Shared by every topic so that all of them speak of
 * the same times and outcomes, and exported in part (`buildNewMessage`) so a host's own
 * tests can make valid messages the same way.
 *
 * @module
 */
import { outcome } from '../../lifecycle/states.js';
import type { NewMessage, PartReceipt, PartRecord } from '../../storage/contract.js';

/** A fixed epoch-ms start time, so tests never read the clock. */
export const T0 = 1_700_000_000_000;

let refCounter = 0;

/**
 * Builds a valid {@link NewMessage} (single part, no callback, accepted at a fixed time)
 * with `overrides` applied; each call gets a fresh unique `ref` unless one is given.
 */
export function buildNewMessage(overrides: Partial<NewMessage> = {}): NewMessage {
  refCounter += 1;
  return {
    ref: `ref-${process.pid}-${refCounter}-${Math.random().toString(36).slice(2, 10)}`,
    principalId: 'principal-a',
    endpoint: 'quick',
    profileCode: 'PROFILE1',
    sender: 'SENDER',
    recipient: '254700000001',
    text: 'Hello',
    messageType: 1,
    reqType: 1,
    externalId: 'ext-1',
    recipientField: 'recipient',
    referenceField: 'external_id',
    smsCount: 1,
    encoding: 'GSM-7',
    callbackUrl: null,
    callbackSecret: null,
    createdAt: T0,
    priority: 'bulk',
    weight: 1,
    ...overrides,
  };
}

/** `count` messages built as {@link buildNewMessage} builds one, each with `overrides`: one request's worth. */
export function buildNewMessages(count: number, overrides: Partial<NewMessage> = {}): NewMessage[] {
  return Array.from({ length: count }, () => buildNewMessage(overrides));
}

/** A delivered part or message. */
export const DELIVERED = outcome('delivered', 'delivered_to_terminal');
/** An undelivered part or message. */
export const UNDELIVERED = outcome('undelivered', 'absent_subscriber');
/** An expired part or message. */
export const EXPIRED = outcome('expired', 'expired');
/** A message the worker gave up on. */
export const FAILED = outcome('failed', 'unknown', 'Gave up after 5 attempts');
/**
 * How many times each race case repeats its race, each round on fresh messages: a race an
 * adapter loses now and then (a claim that finds nothing while others hold locks, a check
 * and a write that interleave) fails one round in a few, so one round would pass it most runs.
 */
export const RACE_ROUNDS = 50;

/** The lease every claim in the suite asks for, in ms. */
export const LEASE = 30_000;

/** A receipt for the part named by `carrierIds` (one spelling or several), `result` at `now`. */
export function receipt(carrierIds: string | readonly string[], result = DELIVERED, now = T0 + 100): PartReceipt {
  return { carrierIds: typeof carrierIds === 'string' ? [carrierIds] : carrierIds, outcome: result, now };
}

/**
 * `parts` without their times (`submittedAt`, `endedAt`): the contract lets a storage keep
 * them or not, so a test of what else a part holds compares without them.
 */
export function withoutTimes(parts: readonly PartRecord[]): PartRecord[] {
  return parts.map(({ index, carrierId, outcome }) => ({ index, carrierId, outcome }));
}

/** The refs of `records`, in order. */
export function refsOf(records: readonly { ref: string }[]): string[] {
  return records.map((record) => record.ref);
}

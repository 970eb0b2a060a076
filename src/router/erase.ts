/**
 * `sms.erase({ recipient })`: erases every stored number and text of one subscriber (a
 * data-subject request; docs/erase.md) through the storage's erase steps (`EraseStorage`),
 * messages first (a pulled report is its message, erased with it; their refs then find the
 * idempotency answers that list them), then those answers and the inbound messages.
 * Each step is bounded, and the process's other work runs between two steps: an erase of a
 * long history never holds the event loop, and the router keeps answering meanwhile.
 *
 * @module
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sha256 } from '../lifecycle/erase-record.js';
import { readNumber } from '../numbers/read-number.js';
import { drainInBatches } from '../worker/periodic.js';
import type { ErasedKind, SubscriberErasedEvent } from '../observe/erase-events.js';
import type { Emit } from '../observe/events.js';
import type { IdempotencyCursor, Storage, Transition } from '../storage/contract.js';

/** What `sms.erase` is asked: the subscriber's number, written as a send may write it. */
export interface EraseRequest {
  /** The number, as the send accepts it: international digits, with `+`, spaces or dashes; or national with `defaultCountry`. */
  recipient: string;
  /** The country a national number is read in (ISO 3166 alpha-2), as a profile's `defaultCountry` is. */
  defaultCountry?: string;
}

/** What `sms.erase` resolves with: the counts per kind, as the `subscriber.erased` event has them. */
export type EraseSummary = SubscriberErasedEvent;

/** What the erase runs on: the router's storage and its hooks. */
export interface EraseDeps {
  storage: Storage;
  /** Resolves once the storage is ready. */
  ready: () => Promise<void>;
  emit: Emit;
  now: () => number;
  /** The router's handling of a transition (the `cancelled` ones: their events and reports). */
  onTransition: (transition: Transition) => void;
  /** Messages per step: small enough that one step of the memory storage is a short synchronous run. */
  batchSize?: number;
  /** Entries per step of a scan ({@link SCAN_PAGE}). */
  scanPage?: number;
}

/** Messages per erase step by default (a step of 25 rows takes about 5 ms of CPU on SQLite, under 1 ms in memory). */
export const ERASE_BATCH = 25;

/** Entries a scan of the report log or of the idempotency records reads per step: most are left as they are, at a read each. */
export const SCAN_PAGE = 200;

/** The international digits `request.recipient` is stored under, as the send reads it; throws a TypeError for no number. */
export function storedNumber(request: EraseRequest): string {
  const raw = (request as Partial<EraseRequest> | undefined)?.recipient;
  if (typeof raw !== 'string' || raw.trim() === '') throw new TypeError('sms.erase: `recipient` must be the subscriber\'s number, a non-empty string');
  const country = request.defaultCountry;
  if (country !== undefined && (typeof country !== 'string' || !/^[A-Z]{2}$/.test(country))) {
    throw new TypeError(`sms.erase: \`defaultCountry\` must be an ISO 3166 alpha-2 code such as "KE", got ${JSON.stringify(country)}`);
  }
  // As the send stores it: the digits read (an international writing with `+` too, which a
  // profile's `defaultCountry` lets a send use), or as written (a number the metadata cannot
  // read, let through by the `digits` policy).
  const digits = readNumber(raw, country ?? null).digits ?? (raw.trim().startsWith('+') ? readNumber(raw.replace(/\D/g, ''), null).digits : null);
  return digits ?? raw;
}

/** Runs `step` from a `null` cursor until it answers `next: null`, a turn of the event loop between two calls. */
async function drain<C>(step: (after: C | null) => Promise<{ erased: number; next: C | null }>): Promise<number> {
  let erased = 0;
  let after: C | null = null;
  for (;;) {
    const page = await step(after);
    erased += page.erased;
    if (page.next === null) return erased;
    after = page.next;
    await nextTurn();
  }
}

/** The `erase` of a router over `deps` (see the module's TSDoc). */
export function subscriberEraser(deps: EraseDeps): (request: EraseRequest) => Promise<EraseSummary> {
  const { storage, emit, now, onTransition } = deps;
  const batch = deps.batchSize ?? ERASE_BATCH;
  const page = deps.scanPage ?? SCAN_PAGE;
  return async (request) => {
    const recipient = storedNumber(request);
    await deps.ready();
    const startedAt = now();
    const notErased: ErasedKind[] = [];
    const refs = new Set<string>();
    let cancelled = 0;
    let messages = 0;
    if (storage.eraseMessages === undefined) notErased.push('messages');
    else {
      messages = await drain<string>(async (after) => {
        const step = await storage.eraseMessages!(recipient, after, batch, now());
        for (const ref of step.refs) refs.add(ref);
        cancelled += step.transitions.length;
        for (const transition of step.transitions) onTransition(transition);
        return step;
      });
    }
    let idempotency = 0;
    if (storage.eraseIdempotency === undefined) {
      if (storage.findIdempotency !== undefined) notErased.push('idempotency');
    } else idempotency = await drain<IdempotencyCursor>((after) => storage.eraseIdempotency!(refs, after, page));
    let inbound = 0;
    if (storage.eraseInbound === undefined) {
      if (storage.insertInbound !== undefined) notErased.push('inbound');
    } else {
      inbound = await drainInBatches(batch, () => storage.eraseInbound!(recipient, batch));
    }
    const summary: EraseSummary = {
      recipientSha256: sha256(recipient), messages, cancelled, idempotency, inbound, notErased, startedAt, endedAt: now(),
    };
    emit('subscriber.erased', summary);
    return summary;
  };
}

/**
 * What happens to a mobile-originated (MO) message the carrier delivers: it is announced
 * (`message.inbound`), stored with the webhook that forwards it to the customer owning the
 * short code, and, when its whole text is a stop or start keyword, opts its sender out of
 * that short code (or back in) in the same atomic step. The promise the carrier's adapter
 * waits on resolves only once all of it is stored, so the carrier is answered after that,
 * as a receipt is.
 *
 * Before storage, every NUL (U+0000) in the text and addresses becomes U+FFFD: no GSM text
 * has one, PostgreSQL cannot store one, and every storage must keep the same message the
 * same way. A message the carrier delivers again within the redelivery window (its answer
 * lost in a crash) is stored and forwarded once: the storage skips it when the newest
 * message of that sender to that recipient has the same text (`InboundInsertOptions.once`).
 * The parts of a long message are joined by parts.ts, and keywords read by keywords.ts.
 */
import { randomUUID } from 'node:crypto';
import type { InboundMessage } from '../delivery/contract.js';
import type { Emit } from '../observe/events.js';
import { SPAN_NAMES, type MessageTracing, type TracedSpan } from '../observe/tracing.js';
import type { WebhookHandOff } from '../outbox/hand-off.js';
import type { InboundRecord, NewInbound, Storage } from '../storage/contract.js';
import type { Keyword } from './keywords.js';
import type { InboundTarget } from './owners.js';
import { InboundParts } from './parts.js';
import { inboundOnceKey, plainAddress, withoutNul } from './text.js';

/**
 * How long after a message the carrier's delivery of the same text, from the same sender to
 * the same recipient, counts as a redelivery of it (ms), unless another message came between;
 * also how far apart the parts of one long message may arrive.
 */
export const INBOUND_REDELIVERY_WINDOW_MS = 10 * 60_000;

/** How long the parts of a long message wait for the others before it goes on as they make it (ms). */
export const INBOUND_PARTS_WAIT_MS = 60_000;

/** What the inbound handler needs. */
export interface InboundHandlerDeps {
  /** Where inbound messages and opt-outs are stored. */
  storage: Storage;
  /** Emits `message.inbound` and the `subscriber.*` events. */
  emit: Emit;
  /** The owner of a short code, or `null`. */
  target: (to: string) => Promise<InboundTarget | null>;
  /** The keyword a text is (whole text, case and surrounding space ignored), or `null`. */
  keyword: (text: string) => Keyword | null;
  /** This instance's webhook sender, to which a forwarded message's webhook is handed once stored. */
  webhooks: WebhookHandOff;
  /** Sends the confirmation of a keyword, when one is configured (its failures are its own). */
  confirm: (keyword: Keyword, shortCode: string, number: string, target: InboundTarget | null) => void;
  /** A long message passed on after its wait could not be stored. */
  error: (error: unknown) => void;
  /** How long the parts of a long message wait for the others; default {@link INBOUND_PARTS_WAIT_MS}. */
  partsWaitMs?: number;
  /**
   * OpenTelemetry: a span per message from its handling to its storage, the root of its own
   * trace, stored with it (`NewInbound.traceparent`) for its webhook attempts; absent or `null`: none.
   */
  tracing?: MessageTracing | null;
}

/** Stores, forwards and acts on the MO messages the carrier delivers. */
export class InboundHandler {
  readonly #deps: InboundHandlerDeps;
  readonly #parts: InboundParts;

  constructor(deps: InboundHandlerDeps) {
    this.#deps = deps;
    const { storage } = deps;
    const storePart = storage.insertInbound === undefined || storage.storeInboundPart === undefined ? null : storage.storeInboundPart.bind(storage);
    this.#parts = new InboundParts({
      storePart,
      deliver: (whole) => this.#receiveWhole(whole),
      error: deps.error,
      waitMs: deps.partsWaitMs ?? INBOUND_PARTS_WAIT_MS,
      spanMs: INBOUND_REDELIVERY_WINDOW_MS,
    });
  }

  /**
   * Handles one MO message, or one part of a long one; resolves once it is stored (and its
   * opt-out change with it), a part once the part is. Rejects when it could not be: the
   * carrier's adapter then refuses it transiently, so the carrier delivers it again. A
   * storage without the inbound methods only announces it.
   */
  async receive(message: InboundMessage): Promise<void> {
    const { part, ...rest } = message;
    const clean: InboundMessage = {
      ...rest,
      from: withoutNul(message.from),
      to: withoutNul(message.to),
      text: withoutNul(message.text),
    };
    if (part !== undefined) return this.#parts.add(clean, part);
    return this.#receiveWhole(clean);
  }

  /** Stops the waits of long messages; their parts held in memory are refused. */
  close(): void {
    this.#parts.close();
  }

  async #receiveWhole(message: InboundMessage): Promise<void> {
    const { storage, emit } = this.#deps;
    emit('message.inbound', message);
    if (storage.insertInbound === undefined) return;
    const tracing = this.#deps.tracing;
    if (tracing == null) return this.#store(message, null);
    // No request of ours began it: its trace starts here, and its webhook attempts join it.
    const span = tracing.root(SPAN_NAMES.mo, { 'sms.inbound.to': plainAddress(message.to) }, 'CONSUMER');
    if (span === null) return this.#store(message, null);
    try {
      await this.#store(message, span);
      span.end();
    } catch (error) {
      span.end(error);
      throw error;
    }
  }

  /** Stores a whole message (`storage.insertInbound` is there), under `span` when traced, and forwards and acts on it. */
  async #store(message: InboundMessage, span: TracedSpan | null): Promise<void> {
    const { storage, emit } = this.#deps;
    const from = plainAddress(message.from);
    const to = plainAddress(message.to);
    const target = await this.#deps.target(to);
    const keyword = this.#deps.keyword(message.text);
    const url = target?.url ?? null;
    const webhooks = this.#deps.webhooks;
    const lease = url === null ? null : webhooks.lease(1);
    const inbound: NewInbound = {
      ref: randomUUID(),
      principalId: target?.principalId ?? null,
      profileCode: target?.profileCode ?? null,
      from,
      to,
      text: message.text,
      receivedAt: message.receivedAt,
      callbackUrl: url,
      callbackSecret: url === null ? null : (target?.secret ?? null),
      uid: url === null ? null : randomUUID(),
    };
    if (span !== null) {
      inbound.traceparent = span.traceparent;
      span.set({ 'sms.inbound_ref': inbound.ref, 'sms.inbound.forwarded': url !== null });
    }
    const optOut = keyword === null ? undefined : keyword === 'stop';
    const once = { key: inboundOnceKey(from, to, message.text), since: message.receivedAt - INBOUND_REDELIVERY_WINDOW_MS };
    const { optOutChanged, duplicate } = await storage.insertInbound!(inbound, { lease: lease ?? undefined, optOut, once }).catch((error: unknown) => {
      webhooks.notStored(1, lease);
      throw error;
    });
    // The carrier delivered it again: the first delivery is stored, forwarded and acted on.
    if (duplicate === true) {
      webhooks.notStored(1, lease);
      span?.set({ 'sms.inbound.duplicate': true });
      return;
    }
    if (url !== null) {
      const record: InboundRecord = {
        ...inbound,
        callback: { state: 'pending', attempts: 0, lastStatusCode: null, lastError: null, nextAttemptAt: inbound.receivedAt },
      };
      webhooks.stored([{ inbound: record }], lease);
    }
    if (keyword === null) return;
    if (optOutChanged) {
      const event = { shortCode: to, number: from, source: 'keyword' as const, inboundRef: inbound.ref, at: inbound.receivedAt };
      emit(keyword === 'stop' ? 'subscriber.opted_out' : 'subscriber.opted_in', event);
    }
    this.#deps.confirm(keyword, to, from, target);
  }
}

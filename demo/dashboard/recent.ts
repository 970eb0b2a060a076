/**
 * The dashboard's model: the last messages the demo accepted, with their state and their
 * delivery report attempts, kept up to date from the router's events.
 */
import type { MessageRecord, NewMessage, SmsRouter, Storage } from '../../src/index.js';

/** One delivery report attempt, as the dashboard shows it. */
export interface CallbackAttemptRow {
  attempt: number;
  result: 'sent' | 'retrying' | 'failed';
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

/** One message row of the dashboard. */
export interface MessageRow {
  ref: string;
  principalId: string;
  endpoint: string;
  externalId: string;
  recipient: string;
  text: string;
  smsCount: number;
  state: string;
  statusReason: string | null;
  /** The reason in words (`status_description`); null until terminal. */
  statusDescription: string | null;
  /** Retryable carrier errors so far. */
  submitRetries: number;
  callbackUrl: string | null;
  callbacks: CallbackAttemptRow[];
  createdAt: number;
  updatedAt: number;
}

/** Called with a row each time it changes. */
export type RowListener = (row: MessageRow) => void;

function rowOf(m: NewMessage | MessageRecord): MessageRow {
  const record = 'state' in m ? m : null;
  return {
    ref: m.ref,
    principalId: m.principalId,
    endpoint: m.endpoint,
    externalId: m.externalId,
    recipient: m.recipient,
    text: m.text,
    smsCount: m.smsCount,
    state: record?.state ?? 'queued',
    statusReason: record?.statusReason ?? null,
    statusDescription: record?.statusDescription ?? null,
    submitRetries: 0,
    callbackUrl: m.callbackUrl,
    callbacks: [],
    createdAt: m.createdAt,
    updatedAt: record?.updatedAt ?? m.createdAt,
  };
}

/**
 * Remembers the `keep` most recent messages seen in `sms`'s events (oldest dropped first)
 * and tells listeners of every change. Only this process's events are seen: a message
 * accepted by another instance shows up once one of its later events happens here.
 */
export class RecentMessages {
  readonly #rows = new Map<string, MessageRow>();
  readonly #listeners = new Set<RowListener>();

  constructor(
    sms: SmsRouter,
    private readonly storage: Storage,
    private readonly keep = 50,
  ) {
    sms.on('message.accepted', ({ message }) => this.#put(rowOf(message)));
    sms.on('message.status', ({ message }) =>
      this.#update(message, (row) => {
        row.state = message.state;
        row.statusReason = message.statusReason;
        row.statusDescription = message.statusDescription;
        row.updatedAt = message.updatedAt;
      }),
    );
    sms.on('message.retrying', ({ ref }) => {
      const row = this.#rows.get(ref);
      if (row === undefined) return;
      row.submitRetries += 1;
      this.#changed(row);
    });
    const callback = (result: CallbackAttemptRow['result']) => (e: { message: MessageRecord; attempt: number; statusCode: number | null; durationMs: number; error?: string | null }) =>
      this.#update(e.message, (row) => {
        row.callbacks.push({ attempt: e.attempt, result, statusCode: e.statusCode, durationMs: e.durationMs, error: e.error ?? null });
      });
    sms.on('dlr.sent', callback('sent'));
    sms.on('dlr.retrying', callback('retrying'));
    sms.on('dlr.failed', callback('failed'));
  }

  /** Subscribes to row changes; returns the unsubscribe function. */
  subscribe(listener: RowListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * The remembered rows, newest first, each state re-read from storage: storage is the
   * truth (another instance, or the retention sweep, may have changed a message).
   */
  async snapshot(): Promise<MessageRow[]> {
    const rows = [...this.#rows.values()].reverse();
    await Promise.all(
      rows.map(async (row) => {
        const stored = await this.storage.getMessage(row.principalId, row.ref);
        if (stored === null) return;
        row.state = stored.state;
        row.statusReason = stored.statusReason;
        row.statusDescription = stored.statusDescription;
        row.updatedAt = Math.max(row.updatedAt, stored.updatedAt);
      }),
    );
    return rows;
  }

  #put(row: MessageRow): void {
    this.#rows.set(row.ref, row);
    for (const oldest of this.#rows.keys()) {
      if (this.#rows.size <= this.keep) break;
      this.#rows.delete(oldest);
    }
    this.#changed(row);
  }

  /** Applies `change` to the message's row, creating the row from the record if it is new here. */
  #update(message: MessageRecord, change: (row: MessageRow) => void): void {
    const row = this.#rows.get(message.ref);
    if (row === undefined) {
      const fresh = rowOf(message);
      change(fresh);
      this.#put(fresh);
      return;
    }
    change(row);
    this.#changed(row);
  }

  #changed(row: MessageRow): void {
    for (const listener of this.#listeners) listener(row);
  }
}

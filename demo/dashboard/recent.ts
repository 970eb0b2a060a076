/**
 * The dashboard's model: the messages the demo accepted, newest first, in pages of 50, with
 * their state and their delivery report attempts, kept up to date from the router's events;
 * and the search by ref or external id.
 *
 * Where the data comes from: the Storage contract has no query that lists messages, so the
 * list is the refs this process saw in the router's events (the last `keep` of them, 10,000
 * by default; a restart starts it empty). Every row shown is re-read from storage with the
 * contract's `getMessage`, storage being the truth; the search uses `getMessage` and
 * `findByExternalId`, so it also finds messages the list never saw.
 */
import { readNumber, type CallbackState, type MessageRecord, type NewMessage, type SmsRouter, type Storage } from '../../src/index.js';

/** Rows per page, on the page and here. */
export const PAGE_SIZE = 50;

/** The most messages a search shows: every match, up to the newest this many. */
export const SEARCH_LIMIT = 1000;

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
  /** The recipient's ISO country (`KE`), or null when the number tells none. */
  country: string | null;
  text: string;
  smsCount: number;
  state: string;
  statusReason: string | null;
  /** The reason in words (`status_description`); null until terminal. */
  statusDescription: string | null;
  /** Retryable carrier errors so far. */
  submitRetries: number;
  callbackUrl: string | null;
  /** The attempts this process saw (a row found in storage only has `callback`). */
  callbacks: CallbackAttemptRow[];
  /**
   * The delivery report as storage keeps it, once the message ended: `pending` with
   * `nextAttemptAt` while it waits for its next attempt.
   */
  callback: CallbackState | null;
  createdAt: number;
  updatedAt: number;
}

/** One page of rows, newest first. */
export interface MessagePage {
  /** 1-based; past the last page, the last page. */
  page: number;
  /** How many pages there are (at least 1). */
  pages: number;
  /** How many messages the list holds. */
  total: number;
  /** At most {@link PAGE_SIZE} rows, newest first. */
  rows: MessageRow[];
}

/** Called with a row each time it changes; `added` when the list did not hold it before. */
export type RowListener = (row: MessageRow, added: boolean) => void;

function rowOf(m: NewMessage | MessageRecord): MessageRow {
  const record = 'state' in m ? m : null;
  return {
    ref: m.ref,
    principalId: m.principalId,
    endpoint: m.endpoint,
    externalId: m.externalId,
    recipient: m.recipient,
    // Read from the number when the record does not carry it (a storage that keeps the seed's fields only).
    country: m.country === undefined ? readNumber(m.recipient, null).country : m.country,
    text: m.text,
    smsCount: m.smsCount,
    state: record?.state ?? 'queued',
    statusReason: record?.statusReason ?? null,
    statusDescription: record?.statusDescription ?? null,
    submitRetries: record?.attempts ?? 0,
    callbackUrl: m.callbackUrl,
    callbacks: [],
    callback: record?.callback ?? null,
    createdAt: m.createdAt,
    updatedAt: record?.updatedAt ?? m.createdAt,
  };
}

/** A message ref: a UUID (the router's are v7). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Remembers the `keep` most recent messages seen in `sms`'s events (oldest dropped first)
 * and tells listeners of every change. Only this process's events are seen: a message
 * accepted by another instance shows up once one of its later events happens here.
 */
export class MessageLog {
  readonly #rows = new Map<string, MessageRow>();
  readonly #listeners = new Set<RowListener>();

  constructor(
    sms: SmsRouter,
    private readonly storage: Storage,
    private readonly keep = 10_000,
  ) {
    sms.on('message.accepted', ({ message }) => this.#put(rowOf(message)));
    sms.on('message.status', ({ message }) =>
      this.#update(message, (row) => {
        row.state = message.state;
        row.statusReason = message.statusReason;
        row.statusDescription = message.statusDescription;
        row.updatedAt = message.updatedAt;
        this.#takeCallback(row, message.callback);
      }),
    );
    sms.on('message.retrying', ({ ref }) => {
      const row = this.#rows.get(ref);
      if (row === undefined) return;
      row.submitRetries += 1;
      this.#changed(row, false);
    });
    const callback =
      (result: CallbackAttemptRow['result']) =>
      (e: { message: MessageRecord; attempt: number; statusCode: number | null; durationMs: number; error?: string | null; nextAttemptAt?: number }) =>
        this.#update(e.message, (row) => {
          row.callbacks.push({ attempt: e.attempt, result, statusCode: e.statusCode, durationMs: e.durationMs, error: e.error ?? null });
          // The event's record is the one the attempt was made for; this is the report after it.
          row.callback = {
            state: result === 'sent' ? 'delivered' : result === 'failed' ? 'failed' : 'pending',
            attempts: e.attempt,
            lastStatusCode: e.statusCode,
            lastError: e.error ?? null,
            nextAttemptAt: e.nextAttemptAt ?? null,
          };
        });
    sms.on('dlr.sent', callback('sent'));
    sms.on('dlr.retrying', callback('retrying'));
    sms.on('dlr.failed', callback('failed'));
  }

  /** How many messages the list holds. */
  get size(): number {
    return this.#rows.size;
  }

  /** Subscribes to row changes; returns the unsubscribe function. */
  subscribe(listener: RowListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Page `page` (1-based) of the remembered rows, newest first, each re-read from storage:
   * storage is the truth (another instance, or the retention sweep, may have changed a
   * message). A page past the last is the last.
   */
  async page(page: number): Promise<MessagePage> {
    const total = this.#rows.size;
    const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
    const shown = Math.min(Math.max(1, page), pages);
    // Newest first: by acceptance time, and the later event first among equal times (the
    // messages of one request share their millisecond).
    const ordered = [...this.#rows.values()].reverse().sort((a, b) => b.createdAt - a.createdAt);
    const rows = ordered.slice((shown - 1) * PAGE_SIZE, shown * PAGE_SIZE);
    await Promise.all(
      rows.map(async (row) => {
        const stored = await this.storage.getMessage(row.principalId, row.ref);
        if (stored !== null) this.#refresh(row, stored);
      }),
    );
    return { page: shown, pages, total, rows };
  }

  /**
   * The principal's messages whose ref or external id is `query`, newest first: at most one
   * by ref (a UUID) and the newest `limit` by external id (a message sent without one has its ref
   * as external id, so a ref finds it both ways; it is listed once).
   */
  async search(principalId: string, query: string, limit = SEARCH_LIMIT): Promise<MessageRow[]> {
    const [byRef, byExternalId] = await Promise.all([
      UUID.test(query) ? this.storage.getMessage(principalId, query.toLowerCase()) : Promise.resolve(null),
      this.storage.findByExternalId(principalId, query, limit),
    ]);
    const found = new Map<string, MessageRecord>();
    for (const record of [...(byRef === null ? [] : [byRef]), ...byExternalId]) found.set(record.ref, record);
    return [...found.values()]
      .map((record) => {
        const row = this.#rows.get(record.ref);
        if (row === undefined) return rowOf(record);
        this.#refresh(row, record);
        return row;
      })
      .sort((a, b) => b.createdAt - a.createdAt);
  }

  /** Takes the stored state into the row. */
  #refresh(row: MessageRow, stored: MessageRecord): void {
    row.state = stored.state;
    row.statusReason = stored.statusReason;
    row.statusDescription = stored.statusDescription;
    row.updatedAt = Math.max(row.updatedAt, stored.updatedAt);
    this.#takeCallback(row, stored.callback);
  }

  /** Takes `callback` into the row unless the row's has more attempts (it is the later one). */
  #takeCallback(row: MessageRow, callback: CallbackState | null): void {
    if (callback !== null && (row.callback === null || callback.attempts >= row.callback.attempts)) row.callback = callback;
  }

  #put(row: MessageRow): void {
    this.#rows.set(row.ref, row);
    for (const oldest of this.#rows.keys()) {
      if (this.#rows.size <= this.keep) break;
      this.#rows.delete(oldest);
    }
    this.#changed(row, true);
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
    this.#changed(row, false);
  }

  #changed(row: MessageRow, added: boolean): void {
    for (const listener of this.#listeners) listener(row, added);
  }
}

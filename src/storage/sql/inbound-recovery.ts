/**
 * Inbound webhook recovery on a SQL storage's inbound table
 * ({@link InboundStorage.listInboundWebhooks}, {@link InboundStorage.replayInboundWebhooks}):
 * a principal's pending or failed webhooks read along the index of its principal and
 * webhook state (`(principal_id, cb_state, received_at, id)`), each state's page read apart
 * and merged, as the message list reads its states (sql/list.ts); a replay makes failed ones
 * pending and due again by ref or by a range of arrival, in pages of that list.
 *
 * @module
 */
import { statesOf, type CallbackListQuery, type ReplaySelection } from '../callback-list.js';
import type { InboundWebhookPage } from '../inbound-record.js';
import { INBOUND_COLUMNS, recordOf } from '../inbound-rows.js';
import { limitClause, type SqlClient, type SqlDialect } from './dialect.js';
import { chunks, tuple } from './rows.js';

/** The names recovery reads: the inbound table, its integer key, and the index of a principal's webhooks by state. */
export interface InboundRecoveryTables {
  /** The inbound table, quoted. */
  inbound: string;
  /** Its integer key, increasing on insert. */
  id: string;
  /** The index of a principal's webhooks by state, for a dialect that must be told ({@link SqlDialect.forceIndex}). */
  openIndex: string;
}

/** Refs (or rows) one statement of a replay names at most. */
const CHUNK = 100;

/** Failed webhooks a range replay reads and writes at once. */
const REPLAY_PAGE = 500;

/** A condition with its parameters. */
interface Condition {
  sql: string;
  params: unknown[];
}

/** Recovery of the inbound webhooks in one SQL storage's table (see the module's TSDoc). */
export class SqlInboundRecovery {
  constructor(
    private readonly client: SqlClient,
    private readonly dialect: SqlDialect,
    private readonly t: InboundRecoveryTables,
    private readonly ready: () => Promise<void>,
  ) {}

  /** One page of the principal's webhooks in the states `query` asks for, newest arrival first. */
  async list(query: CallbackListQuery): Promise<InboundWebhookPage> {
    await this.ready();
    const limit = Math.floor(query.limit);
    if (limit <= 0) return { inbound: [], next: null };
    // One more than the page: whether a next page exists without a second query.
    const rows = await this.#rows(query, limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      inbound: page.map(recordOf),
      next: rows.length <= limit || last === undefined ? null : { createdAt: Number(last.received_at), seq: Number(last.row_id) },
    };
  }

  /** Makes the principal's failed webhooks `selection` names pending and due at `now`; how many. */
  async replay(selection: ReplaySelection, now: number): Promise<number> {
    await this.ready();
    const { principalId } = selection;
    let replayed = 0;
    if ('refs' in selection) {
      for (const slice of chunks([...new Set(selection.refs)], CHUNK)) replayed += await this.#replayWhere(`ref IN ${tuple(slice.length)}`, slice, principalId, now);
      return replayed;
    }
    const query: CallbackListQuery = { ...selection, states: ['failed'], limit: REPLAY_PAGE };
    for (;;) {
      const rows = await this.#rows(query, REPLAY_PAGE);
      if (rows.length > 0) replayed += await this.#replayWhere(`${this.t.id} IN ${tuple(rows.length)}`, rows.map((row) => row.row_id), principalId, now);
      const last = rows.at(-1);
      if (rows.length < REPLAY_PAGE || last === undefined) return replayed;
      query.after = { createdAt: Number(last.received_at), seq: Number(last.row_id) };
    }
  }

  /** Replays the principal's failed webhooks among the rows `where` names; how many. */
  async #replayWhere(where: string, params: readonly unknown[], principalId: string, now: number): Promise<number> {
    const { affected } = await this.client.run(
      this.dialect.placeholders(
        `UPDATE ${this.t.inbound} SET cb_state = 'pending', cb_next_attempt_at = ?, cb_restarted_after = cb_attempts, lease_owner = NULL, lease_until = NULL
          WHERE ${where} AND principal_id = ? AND cb_state = 'failed'`,
      ),
      [now, ...params, principalId],
    );
    return affected;
  }

  /** Up to `limit` rows of `query`, newest arrival first, with `row_id`: each state's index walked apart, then merged. */
  async #rows(query: CallbackListQuery, limit: number): Promise<Record<string, unknown>[]> {
    const { inbound, id, openIndex } = this.t;
    const where: Condition[] = [{ sql: 'principal_id = ?', params: [query.principalId] }];
    if (query.since !== undefined) where.push({ sql: 'received_at >= ?', params: [query.since] });
    if (query.until !== undefined) where.push({ sql: 'received_at < ?', params: [query.until] });
    if (query.after !== undefined) {
      const { createdAt, seq } = query.after;
      where.push({ sql: `received_at <= ? AND (received_at < ? OR ${id} < ?)`, params: [createdAt, createdAt, seq] });
    }
    const order = `ORDER BY received_at DESC, row_id DESC ${limitClause(this.dialect)}`;
    const select = (state: string): Condition => {
      // The state written out (one of two fixed words), so a partial index on the open states serves it.
      const all = [...where, { sql: `cb_state = '${state === 'failed' ? 'failed' : 'pending'}'`, params: [] }];
      return {
        sql: `SELECT ${id} AS row_id, ${INBOUND_COLUMNS} FROM ${inbound}${this.dialect.forceIndex(openIndex)} WHERE ${all.map((c) => c.sql).join(' AND ')}
          ORDER BY received_at DESC, ${id} DESC ${limitClause(this.dialect)}`,
        params: [...all.flatMap((c) => c.params), limit],
      };
    };
    const parts = statesOf(query).map(select);
    const statement: Condition =
      parts.length === 1
        ? parts[0]!
        : {
            sql: `SELECT * FROM (${parts.map((part, i) => `SELECT * FROM (${part.sql}) AS s${i}`).join(' UNION ALL ')}) AS u ${order}`,
            params: [...parts.flatMap((part) => part.params), limit],
          };
    const { rows } = await this.client.run(this.dialect.placeholders(statement.sql), statement.params);
    return rows;
  }
}


/**
 * Report recovery over a record store: a principal's reports listed by state, and a replay
 * that makes failed reports pending again. A replayed report is due at once, in its own
 * place among the due reports (`orderKey` its new due time), its attempts counted on from
 * where they were and its retry schedule started anew (`CallbackState.restartedAfter`), so
 * the dispatcher sends it as a new attempt, signed at that attempt's time.
 *
 * With one report per part, a replay sends again the report the row names now (the last
 * part's whose report was made).
 *
 * @module
 */
import type { CallbackListQuery, ReplaySelection } from '../storage/callback-list.js';
import type { MessageListPage } from '../storage/message-list.js';
import type { MessageRow, RecordStore } from '../storage/record-store.js';
import type { Decision, RowWriter } from './compare-and-set.js';
import { recordFields } from './copy-record.js';
import { listPage } from './list.js';
import { nextRow } from './rows.js';

/** Rows a range replay reads and writes at once: one page of the failed list. */
const REPLAY_PAGE = 500;

/** A store that lists reports by state. */
type CallbackListing = RecordStore & Required<Pick<RecordStore, 'listCallbacks'>>;

/** The report recovery of a ledger (see the module's TSDoc). */
export class CallbackRecovery {
  constructor(
    private readonly store: CallbackListing,
    private readonly writer: RowWriter,
  ) {}

  /** One page of the principal's reports in the states `query` asks for. */
  list(query: CallbackListQuery): Promise<MessageListPage> {
    return listPage((page) => this.store.listCallbacks(page), query);
  }

  /** Makes the failed reports `selection` names pending and due at `now`; how many. */
  async replay(selection: ReplaySelection, now: number): Promise<number> {
    const rule = replayRule(selection.principalId, now);
    let replayed = 0;
    if ('refs' in selection) {
      for (const ref of new Set(selection.refs)) {
        const row = await this.store.getMessage(ref);
        if (row !== null && (await this.writer.updateRead(row, rule))) replayed += 1;
      }
      return replayed;
    }
    const query: CallbackListQuery = { principalId: selection.principalId, states: ['failed'], limit: REPLAY_PAGE };
    if (selection.since !== undefined) query.since = selection.since;
    if (selection.until !== undefined) query.until = selection.until;
    for (;;) {
      const rows = await this.store.listCallbacks(query);
      for (const done of await this.writer.updateAll(rows, rule)) if (done) replayed += 1;
      const last = rows.at(-1);
      if (rows.length < REPLAY_PAGE || last === undefined) return replayed;
      query.after = { createdAt: last.record.createdAt, seq: last.seq };
    }
  }
}

/** The rule that replays a row's report when it is the principal's and failed: true when it did. */
function replayRule(principalId: string, now: number): (row: MessageRow | null) => Decision<boolean> {
  return (row) => {
    const callback = row?.record.callback;
    if (row === null || row.record.principalId !== principalId || row.book.reportUid === null || callback?.state !== 'failed') return { result: false };
    const record = recordFields(row.record);
    // From the main URL again, on the whole schedule.
    const { failover: _, ...kept } = callback;
    record.callback = { ...kept, state: 'pending', nextAttemptAt: now, restartedAfter: callback.attempts };
    return { result: true, row: nextRow(row, { record, reportDueAt: now, orderKey: now }) };
  };
}

/**
 * The memory record store's report log: each principal's entries in the order they were
 * appended, each with the store's next key; a read from a key is a binary search.
 *
 * @module
 */
import type { LoggedReport, ReportLogEntry } from '../report-log.js';

/** Every principal's logged reports, by principal, in key order. */
export class MemoryReportLog {
  readonly #byPrincipal = new Map<string, LoggedReport[]>();
  #seq = 0;

  /** Appends `entry` with the next key. */
  append(entry: ReportLogEntry): void {
    let own = this.#byPrincipal.get(entry.principalId);
    if (own === undefined) this.#byPrincipal.set(entry.principalId, (own = []));
    own.push({ ...entry, seq: ++this.#seq });
  }

  /** The principal's entries with a key above `after`, in key order, at most `limit`. */
  read(principalId: string, after: number | null, limit: number): LoggedReport[] {
    const own = this.#byPrincipal.get(principalId);
    if (own === undefined || limit <= 0) return [];
    let low = 0;
    let high = own.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (after !== null && own[mid]!.seq <= after) low = mid + 1;
      else high = mid;
    }
    return own.slice(low, low + limit).map((entry) => ({ ...entry }));
  }
}

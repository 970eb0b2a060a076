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
  /** Whose each entry is, in key order: the purge takes the oldest from the front. */
  #order: string[] = [];
  /** How many of `#order`'s first entries were purged (a cursor, so a purge does not shift the array). */
  #purged = 0;
  #seq = 0;

  /** Appends `entry` with the next key. */
  append(entry: ReportLogEntry): void {
    let own = this.#byPrincipal.get(entry.principalId);
    if (own === undefined) this.#byPrincipal.set(entry.principalId, (own = []));
    own.push({ ...entry, seq: ++this.#seq });
    this.#order.push(entry.principalId);
  }

  /** See `RecordStore.purgeReports`. */
  purge(before: number, limit: number): number {
    const dropped = new Map<string, number>();
    let count = 0;
    while (count < limit && this.#purged < this.#order.length) {
      const principalId = this.#order[this.#purged]!;
      const own = this.#byPrincipal.get(principalId)!;
      const skip = dropped.get(principalId) ?? 0;
      if (own[skip]!.message.updatedAt >= before) break;
      dropped.set(principalId, skip + 1);
      this.#purged++;
      count++;
    }
    for (const [principalId, n] of dropped) {
      const own = this.#byPrincipal.get(principalId)!;
      if (n === own.length) this.#byPrincipal.delete(principalId);
      else own.splice(0, n);
    }
    // Compact the order once most of it is purged: the cost is spread over the purges before.
    if (this.#purged > 1024 && this.#purged * 2 > this.#order.length) {
      this.#order = this.#order.slice(this.#purged);
      this.#purged = 0;
    }
    return count;
  }

  /** Up to `limit` entries of every principal with a key above `after`, in key order (see `RecordStore.scanReports`). */
  scan(after: number | null, limit: number): LoggedReport[] {
    if (limit <= 0) return [];
    const heads: LoggedReport[] = [];
    for (const own of this.#byPrincipal.values()) heads.push(...own.slice(firstAbove(own, after), firstAbove(own, after) + limit));
    return heads.sort((a, b) => a.seq - b.seq).slice(0, limit).map((entry) => ({ ...entry }));
  }

  /** Replaces the message of each of `entries` still in the log (see `RecordStore.rewriteReports`); how many. */
  rewrite(entries: readonly LoggedReport[]): number {
    let rewritten = 0;
    for (const entry of entries) {
      const own = this.#byPrincipal.get(entry.principalId);
      if (own === undefined) continue;
      const at = firstAbove(own, entry.seq - 1);
      if (own[at]?.seq !== entry.seq) continue;
      own[at] = { ...own[at], message: entry.message };
      rewritten++;
    }
    return rewritten;
  }

  /** The principal's entries with a key above `after`, in key order, at most `limit`. */
  read(principalId: string, after: number | null, limit: number): LoggedReport[] {
    const own = this.#byPrincipal.get(principalId);
    if (own === undefined || limit <= 0) return [];
    const low = firstAbove(own, after);
    return own.slice(low, low + limit).map((entry) => ({ ...entry }));
  }
}

/** The index in `own` (in key order) of its first entry with a key above `after` (`null`: 0), by binary search. */
function firstAbove(own: readonly LoggedReport[], after: number | null): number {
  let low = 0;
  let high = own.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (after !== null && own[mid]!.seq <= after) low = mid + 1;
    else high = mid;
  }
  return low;
}

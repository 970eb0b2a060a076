/**
 * Purges in small transactions. better-sqlite3 runs SQL on the event loop, so a purge of 1,000
 * messages (a few deletes each) holds every request up for as long as it runs: tens of ms on
 * a loaded machine. A purge here deletes at most {@link PURGE_CHUNK} rows per transaction, each
 * a write of its own in the group commit, so requests are served between two of them whatever
 * `limit` the caller asks for.
 *
 * @module
 */

/** Rows one purge transaction deletes at most: about a millisecond of work. */
export const PURGE_CHUNK = 100;

/**
 * Runs `chunk(n)`, a write that deletes at most `n` rows and returns how many it deleted,
 * until `limit` rows are gone or a chunk finds fewer than it could take; returns how many in all.
 */
export async function purgeInChunks(limit: number, chunk: (n: number) => Promise<number>): Promise<number> {
  let deleted = 0;
  while (deleted < limit) {
    const n = Math.min(PURGE_CHUNK, limit - deleted);
    const done = await chunk(n);
    deleted += done;
    if (done < n) break;
  }
  return deleted;
}

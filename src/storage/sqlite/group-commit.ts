/**
 * Group commit for SQLite: every write asked for in the same turn of the event loop runs
 * in one transaction, so a burst of requests and worker steps pays for one disk sync
 * instead of one each. A write that throws (a duplicate ref, say) rolls back alone and
 * fails only its own caller: the group is first tried as one plain transaction, and only
 * if a write throws is it rolled back whole and run again with each write in its own
 * savepoint. Writes are SQL work whose result depends only on the database, so running
 * one again after the rollback gives what it would have given the first time.
 *
 * @module
 */
import type Database from 'better-sqlite3';

interface QueuedWrite {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** A write of the one-transaction attempt threw (as opposed to BEGIN or COMMIT failing). */
class WriteFailed extends Error {
  constructor(cause: unknown) {
    super('a write of the group failed', { cause });
  }
}

/** Queues synchronous write functions and commits them together. */
export class GroupCommit {
  /** The whole group in one transaction, no savepoints: throws (and rolls back) if a write throws. */
  readonly #fast: Database.Transaction<(writes: readonly QueuedWrite[]) => unknown[]>;
  readonly #group: Database.Transaction<(writes: readonly QueuedWrite[]) => unknown[]>;
  #queue: QueuedWrite[] = [];
  #timer: NodeJS.Immediate | null = null;

  /** Prepares the group's transactions on `db`; nothing is written until a write is queued. */
  constructor(db: Database.Database) {
    // A transaction function called inside another runs as a savepoint (better-sqlite3).
    const savepoint = db.transaction((write: QueuedWrite) => write.run());
    // A savepoint costs two statements per write; most groups have no failing write.
    this.#fast = db.transaction((writes: readonly QueuedWrite[]) =>
      writes.map((write) => {
        try {
          return { ok: true, value: write.run() };
        } catch (error) {
          throw new WriteFailed(error);
        }
      }),
    );
    this.#group = db.transaction((writes: readonly QueuedWrite[]) =>
      writes.map((write) => {
        try {
          return { ok: true, value: savepoint(write) };
        } catch (error) {
          return { ok: false, value: error };
        }
      }),
    );
  }

  /** Runs `write` inside the next group's transaction; resolves with its result after the commit. */
  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ run: write, resolve: resolve as (value: unknown) => void, reject });
      this.#timer ??= setImmediate(() => this.flush());
    });
  }

  /** Commits everything queued now (also called by `close()`, so nothing waiting is lost). */
  flush(): void {
    if (this.#timer !== null) clearImmediate(this.#timer);
    this.#timer = null;
    const writes = this.#queue;
    this.#queue = [];
    if (writes.length === 0) return;
    let results: { ok: boolean; value: unknown }[];
    try {
      try {
        results = this.#fast.immediate(writes) as { ok: boolean; value: unknown }[];
      } catch (error) {
        if (!(error instanceof WriteFailed)) throw error;
        // A write threw: nothing was kept. Again, one savepoint each, so only the writes
        // that fail on their own fail.
        results = this.#group.immediate(writes) as { ok: boolean; value: unknown }[];
      }
    } catch (error) {
      // The commit itself failed (disk full, database locked too long): nothing was kept.
      for (const write of writes) write.reject(error);
      return;
    }
    writes.forEach((write, i) => {
      const result = results[i]!;
      if (result.ok) write.resolve(result.value);
      else write.reject(result.value);
    });
  }
}

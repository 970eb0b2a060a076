/**
 * Group commit for SQLite: every write asked for in the same turn of the event loop runs
 * in one transaction, so a burst of requests and worker steps pays for one disk sync
 * instead of one each. Each write runs in its own savepoint inside it, so one that throws
 * (a duplicate ref, say) rolls back alone and fails only its own caller.
 */
import type Database from 'better-sqlite3';

interface QueuedWrite {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Queues synchronous write functions and commits them together. */
export class GroupCommit {
  readonly #group: Database.Transaction<(writes: readonly QueuedWrite[]) => unknown[]>;
  #queue: QueuedWrite[] = [];
  #timer: NodeJS.Immediate | null = null;

  constructor(db: Database.Database) {
    // A transaction function called inside another runs as a savepoint (better-sqlite3).
    const savepoint = db.transaction((write: QueuedWrite) => write.run());
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
      results = this.#group.immediate(writes) as { ok: boolean; value: unknown }[];
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
